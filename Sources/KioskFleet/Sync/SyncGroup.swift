import Foundation
import KioskControl
import KioskCore
import Logging

/// What a sync group sends through: the fleet's MQTT connection, or a test's fake. Loop thread.
public protocol SyncTransport: AnyObject {
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool)
    func subscribe(_ pattern: String)
}

/// One member of a sync group: kiosks that share one clock over the fleet's broker, so that what each shows at a
/// group time is the same (`groupTime(atLocal:)`).
///
/// Topics, under `kioskd/sync/<group>/`:
/// - `hello/<id>`: every second, `{id, role, leader, status}`: the member is live, what it may be, whom it takes
///   for the leader, and its fleet status topic, whose last will (`offline`) tells the others at once that it is
///   gone. A member not heard for `liveness` is gone too.
/// - `time/<leader>`: a follower's request `{from, n, t0}`; `reply/<follower>`: the leader's answer
///   `{n, t0, t1, t2}` (`SyncClockEstimator`).
///
/// The leader is the lowest id among the live members that may lead (`role: leader` before `auto`; `follower`
/// never leads), chosen by each member from what it has heard (`elect`), after listening for `listenPeriod` first.
/// The group clock is the first leader's real-time clock; a member that becomes leader keeps the group time it had
/// (its estimate's line, rate included), and one that joins follows the leader until it has that time, so a leader
/// that leaves, or a better one that joins, moves no member's timeline. Without the broker a
/// member keeps its last line and runs on free.
///
/// Every payload from outside is bounded (`maximumPayloadBytes`) and checked; what is not understood is counted
/// and dropped. Loop thread.
public final class SyncGroup {
    public enum Role: String, CaseIterable, Sendable { case auto, leader, follower }

    public static let helloInterval: Duration = .seconds(1)
    /// A member not heard from for this long is gone.
    public static let liveness: Duration = .milliseconds(3_000)
    /// How long a member listens for the others before it may take the lead itself.
    public static let listenPeriod: Duration = .milliseconds(1_500)
    /// Time exchanges: quickly until `convergedSamples` are in, then at `requestInterval`.
    public static let fastRequestInterval: Duration = .milliseconds(250)
    public static let requestInterval: Duration = .seconds(1)
    public static let convergedSamples = 8
    public static let maximumPayloadBytes = 512
    /// Ids: what a topic level may hold, at most 64 bytes.
    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "#") }
    }

    public let group: String
    public let id: String
    public let role: Role
    /// The fleet status topic whose last will says this member is gone (`<prefix>/status`), if any.
    public let statusTopic: String?
    public private(set) var leader: String?
    public private(set) var estimator = SyncClockEstimator()
    /// Messages dropped: too large, not JSON of the expected shape, or from an id that is not one.
    public private(set) var messagesDropped = 0
    /// Leaders seen in turn, for logs and tests.
    public private(set) var leaderChanges = 0
    /// Called on the loop when the leader changes (nil: none known).
    public var onLeaderChanged: ((String?) -> Void)?

    private struct Member {
        var lastHeard: Int64
        var role: Role
        var status: String?
        /// Whom it takes for the leader.
        var leader: String?
    }

    private struct Hello: Codable { var id: String; var role: String; var leader: String?; var status: String? }
    private struct Request: Codable { var from: String; var n: Int64; var t0: Int64 }
    private struct Reply: Codable { var n: Int64; var t0: Int64; var t1: Int64; var t2: Int64; var leader: String? }

    private let transport: SyncTransport
    private let loop: MainLoop
    private let localNow: () -> Int64
    private var members: [String: Member] = [:]
    private var statusTopics: [String: String] = [:]
    /// Members whose last will said they were gone, and when.
    private var departed: [String: Int64] = [:]
    private var started: Int64?
    private var timers: [TimerHandle] = []
    private var requestTimer: TimerHandle?
    private var nextRequest: Int64 = 0
    private var pending: (n: Int64, t0: Int64, leader: String)?
    /// Whether this member has led: its own line is then the group's time until it has an estimate of another's.
    private var hasLed = false
    /// Whose clock the estimator's exchanges were made with.
    private var estimatedLeader: String?
    /// The group clock's line while this member leads: offset at `reference` (local) and rate.
    private var ownLine: (reference: Int64, offset: Int64, rate: Double)
    private let logger = Logger(label: "kioskd.sync")

    private var prefix: String { "kioskd/sync/\(group)/" }

    /// - Parameters:
    ///   - localNow: this member's clock, in nanoseconds (CLOCK_MONOTONIC; tests give one with an offset and a
    ///     drift).
    ///   - realNow: the real-time clock at start, in nanoseconds: the group clock's origin if this member is the
    ///     first leader.
    public init(group: String, id: String, role: Role, statusTopic: String? = nil, transport: SyncTransport, loop: MainLoop,
                localNow: @escaping () -> Int64, realNow: Int64) {
        self.group = group
        self.id = id
        self.role = role
        self.statusTopic = statusTopic
        self.transport = transport
        self.loop = loop
        self.localNow = localNow
        ownLine = (localNow(), realNow - localNow(), 0)
    }

    deinit { stop() }

    /// Subscribes and starts the hellos, the election and the exchanges. Call again after the connection is back
    /// (subscriptions are the connection's).
    public func start() {
        for pattern in ["hello/+", "time/\(id)", "reply/\(id)"] { transport.subscribe(prefix + pattern) }
        for topic in statusTopics.keys { transport.subscribe(topic) }
        guard started == nil else { sayHello(); return }
        started = localNow()
        sayHello()
        timers = [
            loop.addTimer(after: Self.helloInterval, repeating: Self.helloInterval) { [weak self] in self?.sayHello() },
            loop.addTimer(after: .milliseconds(250), repeating: .milliseconds(250)) { [weak self] in self?.elect() },
        ]
        requestTimer = loop.addTimer(after: Self.fastRequestInterval, repeating: Self.fastRequestInterval) { [weak self] in self?.requestTime() }
    }

    public func stop() {
        for timer in timers { timer.cancel() }
        timers = []
        requestTimer?.cancel()
        requestTimer = nil
    }

    /// Whether this member leads the group now.
    public var isLeader: Bool { leader == id }

    /// The group's time at the local instant `local`, or nil while it is not known (a follower before its first
    /// exchange with a leader).
    public func groupTime(atLocal local: Int64) -> Int64? {
        if isLeader { return local &+ ownOffset(at: local) }
        if estimator.hasEstimate { return estimator.groupTime(at: local) }
        // A leader that handed over keeps its clock until its first exchange with the next; a member that has
        // listened and found no one runs on its own.
        if hasLed || (leader == nil && started.map { local - $0 >= Self.listenPeriod.nanosecondsClamped } == true) {
            return local &+ ownOffset(at: local)
        }
        return nil
    }

    /// The group's time now.
    public func groupTime() -> Int64? { groupTime(atLocal: localNow()) }

    /// Live members, this one included, by id.
    public var liveMembers: [String] {
        let now = localNow()
        return ([id] + members.filter { now - $0.value.lastHeard <= Self.liveness.nanosecondsClamped }.map(\.key)).sorted()
    }

    /// `stats.sync` and the MQTT state's `sync`: the group, this member's id and role (`leader`, `follower`, or
    /// `joining` before it knows the group's time), the leader, the live members, the group clock's offset from
    /// this member's real-time clock (`realNow`) and the estimate's jitter and rate, in milliseconds and ppm.
    public func statistics(realNow: Int64) -> JSONValue {
        let time = groupTime()
        let role = isLeader ? "leader" : (time == nil ? "joining" : "follower")
        let jitter: JSONValue = isLeader ? .double(0) : (estimator.hasEstimate ? .double(Double(estimator.jitter) / 1e6) : .null)
        return .object([
            "group": .string(group), "id": .string(id), "role": .string(role), "leader": leader.map(JSONValue.string) ?? .null,
            "members": .array(liveMembers.map(JSONValue.string)),
            "offset_ms": time.map { .double(Double($0 - realNow) / 1e6) } ?? .null,
            "jitter_ms": jitter,
            "rate_ppm": .double((isLeader ? ownLine.rate : estimator.rate) * 1e6),
            "exchanges": .int(Int64(estimator.samples.count)),
            "messages_dropped": .int(Int64(messagesDropped)),
        ])
    }

    /// Whether `topic` is the group's or a member's status topic: `receive` takes it.
    public func handles(_ topic: String) -> Bool { topic.hasPrefix(prefix) || statusTopics[topic] != nil }

    /// A message on one of the group's topics (or a member's status topic).
    public func receive(topic: String, payload: [UInt8]) {
        guard payload.count <= Self.maximumPayloadBytes else { return drop("\(topic): \(payload.count) bytes, over \(Self.maximumPayloadBytes)") }
        if let member = statusTopics[topic] {
            if payload == Array("offline".utf8) {
                members[member] = nil
                departed[member] = localNow()
                elect()
            }
            return
        }
        guard topic.hasPrefix(prefix) else { return }
        let rest = topic.dropFirst(prefix.count)
        let decoder = JSONDecoder()
        if rest.hasPrefix("hello/") {
            guard let hello = try? decoder.decode(Hello.self, from: Data(payload)), Self.isValidID(hello.id), rest.dropFirst(6) == hello.id,
                  let role = Role(rawValue: hello.role) else { return drop("\(topic): not a hello") }
            guard hello.id != id else { return }
            // A hello sent before the member's will, delivered after it, does not bring it back.
            if let gone = departed[hello.id] {
                guard localNow() - gone > Self.helloInterval.nanosecondsClamped else { return }
                departed[hello.id] = nil
            }
            members[hello.id] = Member(lastHeard: localNow(), role: role, status: hello.status, leader: hello.leader)
            if let status = hello.status, statusTopics[status] == nil, status.utf8.count <= 200, !status.contains("+"), !status.contains("#") {
                statusTopics[status] = hello.id
                transport.subscribe(status)
            }
            elect()
        } else if rest == "time/\(id)" {
            let t1 = groupTime(atLocal: localNow())
            guard let request = try? decoder.decode(Request.self, from: Data(payload)), Self.isValidID(request.from) else { return drop("\(topic): not a time request") }
            guard isLeader, let t1, let t2 = groupTime() else { return }
            let reply = Reply(n: request.n, t0: request.t0, t1: t1, t2: t2, leader: id)
            if let data = try? JSONEncoder().encode(reply) { transport.publish(prefix + "reply/\(request.from)", Array(data), retain: false) }
        } else if rest == "reply/\(id)" {
            let t3 = localNow()
            guard let reply = try? decoder.decode(Reply.self, from: Data(payload)) else { return drop("\(topic): not a time reply") }
            guard let pending, reply.n == pending.n, reply.t0 == pending.t0, reply.leader == pending.leader, !isLeader else { return }
            self.pending = nil
            if estimatedLeader != pending.leader {
                estimator.reset()
                estimatedLeader = pending.leader
            }
            estimator.add(t0: reply.t0, t1: reply.t1, t2: reply.t2, t3: t3)
            if estimator.samples.count == Self.convergedSamples {
                requestTimer?.cancel()
                requestTimer = loop.addTimer(after: Self.requestInterval, repeating: Self.requestInterval) { [weak self] in self?.requestTime() }
            }
        }
    }

    private func drop(_ why: String) {
        messagesDropped += 1
        if messagesDropped <= 10 { logger.warning("sync group \(group): dropped \(why)") }
    }

    private func ownOffset(at local: Int64) -> Int64 {
        ownLine.offset &+ Int64((Double(local &- ownLine.reference) * ownLine.rate).rounded())
    }

    private func sayHello() {
        let hello = Hello(id: id, role: role.rawValue, leader: leader, status: statusTopic)
        if let data = try? JSONEncoder().encode(hello) { transport.publish(prefix + "hello/\(id)", Array(data), retain: false) }
    }

    private func requestTime() {
        guard let leader, leader != id else { return }
        nextRequest += 1
        let t0 = localNow()
        pending = (nextRequest, t0, leader)
        let request = Request(from: id, n: nextRequest, t0: t0)
        if let data = try? JSONEncoder().encode(request) { transport.publish(prefix + "time/\(leader)", Array(data), retain: false) }
    }

    /// Chooses the leader from the live members: the best is the lowest id among those that may lead (`leader`
    /// roles first, then `auto`). Another member is followed once it claims the lead (its hellos name itself);
    /// until then the current leader, while live, keeps it. This member takes the lead only after listening, and
    /// only with the group's time in hand: while another live member leads, it follows that one until its estimate
    /// of the leader's clock has converged, then carries that clock on, so the group clock never jumps.
    func elect() {
        let now = localNow()
        members = members.filter { now - $0.value.lastHeard <= Self.liveness.nanosecondsClamped }
        statusTopics = statusTopics.filter { members[$0.value] != nil }
        var candidates = members.map { (id: $0.key, role: $0.value.role) }
        candidates.append((id, role))
        let eligible = candidates.filter { $0.role != .follower }
        let preferred = eligible.contains { $0.role == .leader } ? eligible.filter { $0.role == .leader } : eligible
        let best = preferred.map(\.id).min()
        let listening = started.map { now - $0 < Self.listenPeriod.nanosecondsClamped } ?? true
        /// Live members that lead by their own word.
        let claiming = members.filter { $0.value.leader == $0.key }.map(\.key)
        let liveLeader = leader.flatMap { $0 == id ? (listening ? nil : $0) : (claiming.contains($0) ? $0 : nil) }
        var chosen: String?
        if best == id, leader == id, !listening {
            chosen = id
        } else if best == id {
            let other = liveLeader.flatMap { $0 == id ? nil : $0 } ?? claiming.min()
            if let other, listening || estimatedLeader != other || estimator.samples.count < Self.convergedSamples {
                chosen = other
            } else {
                chosen = listening ? nil : id
            }
        } else if let best, claiming.contains(best) {
            chosen = best
        } else {
            chosen = liveLeader ?? claiming.min()
        }
        guard chosen != leader else { return }
        if chosen == id {
            // The group time this member had becomes the group's: its estimate's line, or its own clock's.
            if estimator.hasEstimate {
                ownLine = (now, estimator.offset(at: now), estimator.rate)
            }
            pending = nil
            hasLed = true
        } else if leader == id, chosen != nil {
            // Handing over: this member's exchanges from now on are with the next leader, whose clock goes on from
            // this one's.
            estimator.reset()
            estimatedLeader = nil
        }
        logger.info("sync group \(group): leader \(chosen ?? "none") (was \(leader ?? "none"))")
        leader = chosen
        leaderChanges += 1
        onLeaderChanged?(chosen)
        if chosen != nil && chosen != id { requestTime() }
        // A new leader says so at once: the others follow it on its claim.
        if chosen == id { sayHello() }
    }
}

extension SyncGroup: GroupTimeline {
    /// The group's time at an instant of CLOCK_MONOTONIC, the clock `localNow` reads in a running kiosk.
    public func groupTime(at local: MonotonicInstant) -> Int64? { groupTime(atLocal: Int64(local.nanoseconds)) }
}
