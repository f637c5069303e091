import Foundation
import KioskControl
import KioskCore
@testable import KioskFleet
import KioskTestSupport
import XCTest

/// A sync group on the manual clock: members whose clocks are seconds apart and drift by 100 ppm, over a fake
/// broker whose deliveries wait a little and, now and then, much longer one way than the other (a queue). The
/// delays are seeded (`SplitMix`), the same on every run.
final class SyncGroupTests: XCTestCase {
    /// A broker in memory: `+` matches one topic level; each delivery waits 1-3 ms, and one in ten 5-40 ms more.
    final class FakeBroker {
        let loop: MainLoop
        var random = SplitMix(seed: 27)
        var clients: [Client] = []
        /// Deliveries made, and messages that reached a client no longer connected.
        var delivered = 0

        init(loop: MainLoop) { self.loop = loop }

        final class Client: SyncTransport {
            weak var broker: FakeBroker?
            var patterns: [String] = []
            var connected = true
            var receive: ((String, [UInt8]) -> Void)?
            init(broker: FakeBroker) { self.broker = broker }
            func publish(_ topic: String, _ payload: [UInt8], retain: Bool) {
                guard connected else { return }
                broker?.route(topic, payload)
            }
            func subscribe(_ pattern: String) { patterns.append(pattern) }
            func matches(_ topic: String) -> Bool {
                patterns.contains { pattern in
                    let p = pattern.split(separator: "/", omittingEmptySubsequences: false)
                    let t = topic.split(separator: "/", omittingEmptySubsequences: false)
                    return p.count == t.count && zip(p, t).allSatisfy { $0 == "+" || $0 == $1 }
                }
            }
        }

        func client() -> Client {
            let made = Client(broker: self)
            clients.append(made)
            return made
        }

        func route(_ topic: String, _ payload: [UInt8]) {
            for client in clients where client.connected && client.matches(topic) {
                var wait = Int64.random(in: 1_000_000...3_000_000, using: &random)
                if Int.random(in: 0..<10, using: &random) == 0 { wait += Int64.random(in: 5_000_000...40_000_000, using: &random) }
                _ = loop.addTimer(after: .nanoseconds(wait)) { [weak self, weak client] in
                    guard let client, client.connected else { return }
                    self?.delivered += 1
                    client.receive?(topic, payload)
                }
            }
        }
    }

    /// A member's clock: the true (loop) time run `ppm` fast and moved by `offset`.
    static func clock(_ loop: MainLoop, offset: Int64, ppm: Double) -> () -> Int64 {
        { let t = Int64(loop.now.nanoseconds); return t + Int64(Double(t) * ppm / 1e6) + offset }
    }

    private var loop: MainLoop!
    private var poller: ManualPoller!
    private var broker: FakeBroker!

    override func setUp() {
        (loop, poller) = MainLoop.manual(startingAt: MonotonicInstant(nanoseconds: 1_000_000_000))
        broker = FakeBroker(loop: loop)
    }

    private func run(for duration: Duration) {
        runManualTime(loop, poller, for: duration, settlingAtEnd: true) {
            for _ in 0..<1000 { let w = loop.wakeups; loop.runOnce(timeout: .zero); if loop.wakeups == w { break } }
        }
    }

    private func member(_ id: String, role: SyncGroup.Role = .auto, offset: Int64, ppm: Double) -> SyncGroup {
        let client = broker.client()
        let member = SyncGroup(group: "window", id: id, role: role, statusTopic: "kioskd/\(id)/status", transport: client, loop: loop,
                               localNow: Self.clock(loop, offset: offset, ppm: ppm), realNow: 1_800_000_000_000_000_000 + offset)
        client.receive = { [weak member] topic, payload in member?.receive(topic: topic, payload: payload) }
        return member
    }

    /// Each member's group time at the true instant now (its own clock read now).
    private func groupTimes(_ members: [SyncGroup]) -> [Int64?] { members.map { $0.groupTime() } }

    func testTheEstimateFollowsAnOffsetOfSecondsAndADriftOf100PPMDespiteQueuedExchanges() {
        var estimator = SyncClockEstimator()
        var random = SplitMix(seed: 5)
        let offset: Int64 = 3_210_987_654, rate = 100e-6
        // The leader's group clock is the true time; the local clock runs 100 ppm fast from `offset` behind.
        func local(_ t: Int64) -> Int64 { t - offset + Int64(Double(t) * rate) }
        var converged: Int?
        for n in 0..<60 {
            let t = Int64(n) * 1_000_000_000
            let up = Int64.random(in: 200_000...600_000, using: &random) + (n % 7 == 3 ? 30_000_000 : 0)
            let down = Int64.random(in: 200_000...600_000, using: &random) + (n % 11 == 5 ? 25_000_000 : 0)
            estimator.add(t0: local(t), t1: t + up, t2: t + up + 50_000, t3: local(t + up + 50_000 + down))
            let probe = t + 500_000_000
            let error = abs(estimator.groupTime(at: local(probe)) - probe)
            if converged == nil, error < 1_000_000, n >= 2 { converged = n + 1 }
            if let converged, n + 1 >= converged + 3 {
                XCTAssertLessThan(error, 1_000_000, "exchange \(n): error \(error) ns half a second after it")
            }
        }
        XCTAssertNotNil(converged)
        print("sync estimator: within 1 ms after \(converged ?? -1) exchanges at 1 s; offset rate \(String(format: "%.1f", estimator.rate * 1e6)) ppm (true -100: the local clock runs fast), jitter \(estimator.jitter) ns")
        XCTAssertEqual(estimator.rate * 1e6, -100, accuracy: 10)
    }

    func testMembersStartedApartAgreeOnTheGroupTimeWithinAFrameAndTheLowestIdLeads() throws {
        let frame: Int64 = 16_666_667
        let a = member("kiosk-a", offset: 0, ppm: 0)
        a.start()
        run(for: .milliseconds(700))
        let b = member("kiosk-b", offset: 7_300_000_000, ppm: 100)
        b.start()
        run(for: .milliseconds(1_100))
        let c = member("kiosk-c", offset: -2_500_000_000, ppm: -100)
        c.start()
        run(for: .seconds(4))
        XCTAssertEqual([a, b, c].map(\.leader), ["kiosk-a", "kiosk-a", "kiosk-a"])
        XCTAssertEqual(a.liveMembers, ["kiosk-a", "kiosk-b", "kiosk-c"])
        var worst: Int64 = 0
        for _ in 0..<120 {
            run(for: .milliseconds(500))
            let times = try groupTimes([a, b, c]).map { try XCTUnwrap($0) }
            worst = max(worst, times.max()! - times.min()!)
        }
        print("sync group (fake broker, 100 ppm, queued legs): worst spread over 60 s \(Double(worst) / 1e6) ms")
        XCTAssertLessThan(worst, frame, "every member shows the same group time within a refresh period")
        XCTAssertEqual(a.statistics(realNow: 0)["role"], "leader")
        XCTAssertEqual(b.statistics(realNow: 0)["role"], "follower")
        XCTAssertEqual(b.statistics(realNow: 0)["leader"], "kiosk-a")
    }

    func testALeaderThatVanishesIsReplacedWithinFiveSecondsAndNoTimelineJumps() throws {
        let frame: Int64 = 16_666_667
        let members = [member("a", offset: 0, ppm: 0), member("b", offset: 4_000_000_000, ppm: 100), member("c", offset: -9_000_000_000, ppm: -80)]
        for m in members { m.start() }
        run(for: .seconds(12))
        XCTAssertEqual(members.map(\.leader), ["a", "a", "a"])
        let before = try groupTimes(Array(members[1...])).map { try XCTUnwrap($0) }
        // The leader's connection drops with no goodbye (SIGKILL, a cable pulled): no will reaches the others.
        broker.clients[0].connected = false
        members[0].stop()
        var replacedAfter: Duration?
        var previous = before
        var step: Duration = .zero
        while step < .seconds(8) {
            run(for: .milliseconds(100))
            step += .milliseconds(100)
            let now = try groupTimes(Array(members[1...])).map { try XCTUnwrap($0) }
            for (old, new) in zip(previous, now) {
                XCTAssertLessThan(abs((new - old) - 100_000_000), frame, "a member's timeline moved by 100 ms of time, within a frame")
            }
            previous = now
            if replacedAfter == nil, members[1].leader == "b", members[2].leader == "b" { replacedAfter = step }
        }
        let replaced = try XCTUnwrap(replacedAfter, "a new leader")
        print("sync group: new leader after \(replaced)")
        XCTAssertLessThanOrEqual(replaced, .seconds(5))
        run(for: .seconds(10))
        let after = try groupTimes(Array(members[1...])).map { try XCTUnwrap($0) }
        XCTAssertLessThan(abs(after[0] - after[1]), frame, "the two left agree on the new leader's clock")
    }

    /// The broker gone for a minute: every member keeps its last offset and rate and runs on free, its timeline
    /// moving evenly, and they still agree within a frame when it is back; the group then comes together under the
    /// lowest id again without a jump.
    func testWithoutTheBrokerMembersRunOnFreeAndComeBackTogether() throws {
        let frame: Int64 = 16_666_667
        let members = [member("a", offset: 0, ppm: 0), member("b", offset: 4_000_000_000, ppm: 100), member("c", offset: -9_000_000_000, ppm: -80)]
        for m in members { m.start() }
        run(for: .seconds(20))
        XCTAssertEqual(members.map(\.leader), ["a", "a", "a"])
        var previous = try groupTimes(members).map { try XCTUnwrap($0) }
        func step(_ phase: String) throws {
            run(for: .milliseconds(250))
            let now = try groupTimes(members).map { try XCTUnwrap($0, "\(phase): every member keeps a group time") }
            for (old, new) in zip(previous, now) {
                XCTAssertLessThan(abs((new - old) - 250_000_000), frame, "\(phase): a timeline moved evenly")
            }
            previous = now
        }
        for client in broker.clients { client.connected = false }
        for _ in 0..<240 { try step("broker gone") }
        let apart = previous.max()! - previous.min()!
        print("sync group: after 60 s without the broker, the members' group times \(Double(apart) / 1e6) ms apart")
        XCTAssertLessThan(apart, frame, "run on free within a frame of each other for a minute")
        for client in broker.clients { client.connected = true }
        for _ in 0..<80 { try step("broker back") }
        XCTAssertEqual(members.map(\.leader), ["a", "a", "a"], "together again under the lowest id")
        XCTAssertLessThan(previous.max()! - previous.min()!, frame)
    }

    /// A member with a lower id that joins a running group, its clock 20 s off, follows the leader until it has
    /// the group's time, then leads: no member's group time moves by more than a frame meanwhile.
    func testALowerIdThatJoinsLaterLeadsWithoutMovingTheGroupClock() throws {
        let frame: Int64 = 16_666_667
        let b = member("b", offset: 0, ppm: 0), c = member("c", offset: 3_000_000_000, ppm: 50)
        b.start(); c.start()
        run(for: .seconds(6))
        XCTAssertEqual([b, c].map(\.leader), ["b", "b"])
        let a = member("a", offset: -20_000_000_000, ppm: -100)
        a.start()
        var previous = try groupTimes([b, c]).map { try XCTUnwrap($0) }
        var aKnew: Int64?
        for _ in 0..<100 {
            run(for: .milliseconds(100))
            let now = try groupTimes([b, c]).map { try XCTUnwrap($0) }
            for (old, new) in zip(previous, now) {
                XCTAssertLessThan(abs((new - old) - 100_000_000), frame, "b's and c's group time moved by 100 ms of time, within a frame")
            }
            previous = now
            if let known = a.groupTime() {
                XCTAssertLessThan(abs(known - now[0]), frame, "a knows the group's time before it shows anything by it")
                if aKnew == nil { aKnew = known }
            }
        }
        XCTAssertNotNil(aKnew)
        XCTAssertEqual([a, b, c].map(\.leader), ["a", "a", "a"], "the lowest id leads once it has the group's time")
        let times = try groupTimes([a, b, c]).map { try XCTUnwrap($0) }
        XCTAssertLessThan(times.max()! - times.min()!, frame)
    }

    func testAMemberWhoseWillSaysOfflineIsGoneAtOnce() throws {
        let a = member("a", offset: 0, ppm: 0), b = member("b", offset: 1_000_000_000, ppm: 0)
        a.start(); b.start()
        run(for: .seconds(3))
        XCTAssertEqual(b.leader, "a")
        broker.clients[0].connected = false
        a.stop()
        // The broker publishes a's last will on its status topic.
        broker.route("kioskd/a/status", Array("offline".utf8))
        run(for: .milliseconds(300))
        XCTAssertEqual(b.leader, "b", "the will ends the member before its hellos are missed")
    }

    func testHostileMessagesAreDroppedAndCounted() {
        let a = member("a", offset: 0, ppm: 0)
        a.start()
        run(for: .seconds(2))
        a.receive(topic: "kioskd/sync/window/hello/x", payload: Array(repeating: 0x41, count: 100_000))
        a.receive(topic: "kioskd/sync/window/hello/x", payload: Array("{not json".utf8))
        a.receive(topic: "kioskd/sync/window/hello/x", payload: Array(#"{"id":"y","role":"auto"}"#.utf8))
        a.receive(topic: "kioskd/sync/window/hello/x", payload: Array(#"{"id":"x","role":"emperor"}"#.utf8))
        a.receive(topic: "kioskd/sync/window/time/a", payload: Array(#"{"from":"a/b","n":1,"t0":0}"#.utf8))
        a.receive(topic: "kioskd/sync/window/reply/a", payload: Array(#"{"n":"one"}"#.utf8))
        XCTAssertEqual(a.messagesDropped, 6)
        XCTAssertEqual(a.liveMembers, ["a"], "no member made up")
        XCTAssertEqual(a.leader, "a")
        for id in ["", "a/b", "+", String(repeating: "x", count: 65)] { XCTAssertFalse(SyncGroup.isValidID(id), id) }
        XCTAssertTrue(SyncGroup.isValidID("kiosk-7.lobby"))
    }

    func testARoleDecidesWhoMayLead() throws {
        let a = member("a", role: .follower, offset: 0, ppm: 0), b = member("b", offset: 0, ppm: 0), c = member("c", role: .leader, offset: 0, ppm: 0)
        for m in [a, b, c] { m.start() }
        run(for: .seconds(3))
        XCTAssertEqual([a, b, c].map(\.leader), ["c", "c", "c"], "a leader role leads before the lowest id")
    }
}
