import Foundation
import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// The tests' one way to wait for a condition no event reports (a socket accepting connections, a file appearing,
/// a render landing on a loop the test turns by hand): check it until it holds, with a deadline, and fail naming
/// what was awaited and the last value seen. Use a `ControlEventStream` wait wherever kioskd reports the thing as
/// an event. Deadlines are on the monotonic clock, so a test that steps the wall clock does not move them.
public enum Poll {
    /// What a wait that ran out of time says: what was awaited, for how long, and the last value seen.
    public struct Timeout: Error, CustomStringConvertible {
        public let what: String
        public let seconds: Double
        public let lastSeen: String?

        public var description: String {
            "waited \(seconds) s for \(what); it did not happen" + (lastSeen.map { " (last seen: \($0))" } ?? "")
        }
    }

    /// Checks `condition` until it holds, every `interval` seconds, for at most `timeout` seconds; throws a
    /// `Timeout` naming `what` when time runs out first. A condition that paces itself (it turns a loop, which
    /// waits for its own events) passes an `interval` of 0.
    public static func until(_ what: @autoclosure () -> String, timeout: Double = 10, interval: Double = 0.02,
                             _ condition: () throws -> Bool) throws {
        _ = try wait(what(), timeout: timeout, interval: interval, reading: condition, satisfies: { $0 }, showsValue: false)
    }

    /// Reads `value` until `accepted` holds for what it read, every `interval` seconds, for at most `timeout`
    /// seconds, and returns that value; throws a `Timeout` naming `what` and the last value read when time runs
    /// out first.
    @discardableResult
    public static func until<Value>(_ what: @autoclosure () -> String, timeout: Double = 10, interval: Double = 0.02,
                                    reading value: () throws -> Value, satisfies accepted: (Value) throws -> Bool) throws -> Value {
        try wait(what(), timeout: timeout, interval: interval, reading: value, satisfies: accepted, showsValue: true)
    }

    /// Turns `loop` until `condition` holds, each turn waiting at most `turn` for the loop's events, for at most
    /// `timeout` seconds; throws a `Timeout` naming `what` when time runs out first. For a test that runs a real
    /// loop on its own thread: the condition is checked first, then after every turn.
    public static func until(_ what: @autoclosure () -> String, timeout: Double = 5, turning loop: MainLoop,
                             every turn: Duration = .milliseconds(20), _ condition: () throws -> Bool) throws {
        if try condition() { return }
        try until(what(), timeout: timeout, interval: 0) {
            loop.runOnce(timeout: turn)
            return try condition()
        }
    }

    /// Turns `loop` without waiting and runs the renders `pool` has queued (a pool of the `.manual` strategy), then
    /// lets other threads run, until `condition` holds, for at most `timeout` seconds; throws a `Timeout` naming
    /// `what` when time runs out first. For a test that turns a loop and its render pool by hand (on a manual clock,
    /// or with work hopping through a background queue): the condition is checked first, then after every turn.
    public static func until(_ what: @autoclosure () -> String, timeout: Double = 10, turning loop: MainLoop,
                             running pool: RenderQueuePool, _ condition: () throws -> Bool) throws {
        if try condition() { return }
        try until(what(), timeout: timeout, interval: 0) {
            loop.runOnce(timeout: .zero)
            _ = pool.runQueued()
            sched_yield()
            return try condition()
        }
    }

    private static func wait<Value>(_ what: @autoclosure () -> String, timeout: Double, interval: Double,
                                    reading value: () throws -> Value, satisfies accepted: (Value) throws -> Bool,
                                    showsValue: Bool) throws -> Value {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while true {
            let read = try value()
            if try accepted(read) { return read }
            guard ContinuousClock.now < deadline else {
                throw Timeout(what: what(), seconds: timeout, lastSeen: showsValue ? "\(read)" : nil)
            }
            if interval > 0 { usleep(useconds_t(interval * 1_000_000)) }
        }
    }
}
