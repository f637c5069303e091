import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One event line from kioskd's control socket: `{"event": name, "data": {...}}`.
public struct ControlEvent: CustomStringConvertible {
    public let name: String
    public let data: [String: Any]

    public subscript(key: String) -> Any? { data[key] }

    /// An integer member of `data` (`sequence`, `frame`), or nil.
    public func int(_ key: String) -> Int? { data[key] as? Int }

    /// A string member of `data` (`kind`, `source`), or nil.
    public func string(_ key: String) -> String? { data[key] as? String }

    public var description: String {
        let members = data.keys.sorted().map { "\($0): \(data[$0].map { "\($0)" } ?? "nil")" }.joined(separator: ", ")
        return "\(name) {\(members)}"
    }
}

/// A control connection subscribed to events, for tests that wait on what kioskd reports (a flip, a presented
/// frame, a scene loaded) with a deadline instead of sleeping and counting afterwards. Requests made through it
/// return their reply and keep the events that arrived meanwhile for the next wait. One thread.
public final class ControlEventStream {
    public let socket: ControlTestSocket
    public let socketPath: String
    /// The connection's subscriptions as `subscribe` answered.
    public private(set) var subscribedEvents: [String] = []
    private var pending: [ControlEvent] = []

    /// Connects to `socketPath` and subscribes to `events`; throws naming the socket when the subscription fails.
    public init(socketPath: String, events: [String]) throws {
        self.socketPath = socketPath
        socket = try ControlTestSocket(path: socketPath)
        let names = events.map { "\"\($0)\"" }.joined(separator: ", ")
        let reply = try request(#"{"id": "subscribe", "cmd": "subscribe", "args": {"events": [\#(names)]}}"#)
        guard reply["ok"] as? Bool == true, let subscribed = (reply["result"] as? [String: Any])?["events"] as? [String] else {
            throw ControlTestError("\(socketPath): subscribe to \(events) failed: \(reply)")
        }
        subscribedEvents = subscribed
    }

    /// Connects to `daemon` and subscribes to `events`.
    public convenience init(_ daemon: ControlledKioskd, events: [String]) throws {
        try self.init(socketPath: daemon.socketPath, events: events)
    }

    /// Sends one request line and returns its reply; events that arrive before it are kept for the next wait.
    public func request(_ json: String, timeout: Double = 20) throws -> [String: Any] {
        guard socket.write(Array((json + "\n").utf8)) else { throw ControlTestError("\(socketPath): cannot send \(json)") }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            guard let object = socket.readObject(deadline: deadline) else {
                throw ControlTestError("\(socketPath): no reply to \(json) within \(timeout) s (closed: \(socket.closedByPeer))")
            }
            guard let event = Self.event(object) else { return object }
            pending.append(event)
        }
    }

    /// The `result` of `stats`, read on this connection.
    public func stats() throws -> [String: Any] {
        let reply = try request(#"{"id": "stats", "cmd": "stats"}"#)
        guard let result = reply["result"] as? [String: Any] else { throw ControlTestError("\(socketPath): stats failed: \(reply)") }
        return result
    }

    /// Reads events until one satisfies `predicate` and returns it (events before it are consumed). Throws when
    /// `timeout` seconds pass or the connection closes first, saying what was awaited and which events were seen.
    @discardableResult
    public func waitFor(_ awaited: String, timeout: Double = 20, where predicate: (ControlEvent) -> Bool) throws -> ControlEvent {
        try waitFor(1, awaited, timeout: timeout, where: predicate)[0]
    }

    /// Reads events until `count` of them satisfy `predicate` and returns those (other events are consumed on
    /// the way). Throws when `timeout` seconds pass or the connection closes first, saying what was awaited, how
    /// many matched, and which events were seen.
    @discardableResult
    public func waitFor(_ count: Int, _ awaited: String, timeout: Double = 20,
                        where predicate: (ControlEvent) -> Bool) throws -> [ControlEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        var matched: [ControlEvent] = [], seen: [String: Int] = [:], last: ControlEvent?
        while matched.count < count {
            let event: ControlEvent
            if !pending.isEmpty {
                event = pending.removeFirst()
            } else if let object = socket.readObject(deadline: deadline) {
                guard let read = Self.event(object) else { continue }  // a late reply: not an event
                event = read
            } else {
                let why = socket.closedByPeer ? "the connection closed" : "\(timeout) s passed"
                let tally = seen.keys.sorted().map { "\($0) ×\(seen[$0]!)" }.joined(separator: ", ")
                throw ControlTestError("\(socketPath): waited for \(count == 1 ? "" : "\(count) × ")\(awaited) but \(why) after "
                    + "\(matched.count) matching; events seen: \(tally.isEmpty ? "none" : tally); last: \(last.map { "\($0)" } ?? "none")")
            }
            seen[event.name, default: 0] += 1
            last = event
            if predicate(event) { matched.append(event) }
        }
        return matched
    }

    /// Waits for `count` events called `name`.
    @discardableResult
    public func waitFor(_ count: Int, events name: String, timeout: Double = 20) throws -> [ControlEvent] {
        try waitFor(count, "'\(name)' events", timeout: timeout) { $0.name == name }
    }

    /// Reads events until none satisfying `predicate` has arrived for `quiet` seconds, and returns those that did
    /// meanwhile: how a test waits for something to settle (start-up frames, the flip in flight when the display
    /// went off), which no event announces. Throws when they are still coming after `timeout` seconds.
    @discardableResult
    public func waitForQuiet(_ awaited: String, quiet: Double, timeout: Double = 20,
                             where predicate: (ControlEvent) -> Bool) throws -> [ControlEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        var matched: [ControlEvent] = []
        var quietUntil = Date().addingTimeInterval(quiet)
        while true {
            if quietUntil > deadline {
                throw ControlTestError("\(socketPath): waited \(timeout) s for \(quiet) s without \(awaited); \(matched.count) came, "
                    + "the last \(matched.last.map { "\($0)" } ?? "none")")
            }
            let event: ControlEvent
            if !pending.isEmpty {
                event = pending.removeFirst()
            } else if let object = socket.readObject(deadline: quietUntil) {
                guard let read = Self.event(object) else { continue }
                event = read
            } else {
                guard !socket.closedByPeer else { throw ControlTestError("\(socketPath): the connection closed while waiting for quiet") }
                return matched
            }
            if predicate(event) {
                matched.append(event)
                quietUntil = Date().addingTimeInterval(quiet)
            }
        }
    }

    /// The next event, waiting for it until `deadline`; nil when none came by then. Throws when the connection
    /// closes. For a test that does something at its own pace (a data update every 100 ms) while it waits for an
    /// event that ends the run.
    public func nextEvent(until deadline: Date) throws -> ControlEvent? {
        if !pending.isEmpty { return pending.removeFirst() }
        while let object = socket.readObject(deadline: deadline) {
            if let event = Self.event(object) { return event }
        }
        if socket.closedByPeer { throw ControlTestError("\(socketPath): the connection closed while waiting for an event") }
        return nil
    }

    /// Forgets the events already read on this connection (those that arrived before the last reply).
    public func discardPendingEvents() {
        pending.removeAll()
    }

    /// Forgets events already received, so the next wait sees only what happens after this call's reply: a ping
    /// round trip marks the point (events sent before the reply precede it on the connection).
    public func discardEarlierEvents() throws {
        _ = try request(#"{"id": "mark", "cmd": "ping"}"#)
        pending.removeAll()
    }

    private static func event(_ object: [String: Any]) -> ControlEvent? {
        guard let name = object["event"] as? String else { return nil }
        return ControlEvent(name: name, data: object["data"] as? [String: Any] ?? [:])
    }
}
