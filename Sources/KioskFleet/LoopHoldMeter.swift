import Glibc
import KioskCore

/// How long calls made on the main loop held it, and how much of that the calling thread spent blocked. A call
/// holds the loop for its whole wall time: its CPU time, any wait for a CPU, and any time blocked (a read, a write,
/// a lock, a sleep). Only the blocked part is the call's own fault whatever the machine's load, so it is measured
/// apart: the wall time less the thread's CPU time, for calls in which the thread gave up the CPU of its own accord
/// (a voluntary context switch, `getrusage(RUSAGE_THREAD)`). A call that was only preempted blocked for nothing.
/// Main loop thread only.
public struct LoopHoldMeter: Sendable {
    /// The longest wall time one call held the loop.
    public private(set) var longestHold: Duration = .zero
    /// The longest time one call spent blocked.
    public private(set) var longestBlock: Duration = .zero

    public init() {}

    /// Where a call began: taken before it, given to `record(since:)` after it. The meter is not held while the
    /// call runs, so callbacks inside it may read the figures.
    public struct Mark: Sendable {
        fileprivate let start: MonotonicInstant
        fileprivate let usage: ThreadUsage?
    }

    public static func mark() -> Mark { Mark(start: MonotonicInstant.now(), usage: ThreadUsage()) }

    public mutating func record(since mark: Mark) {
        let held = MonotonicInstant.now() - mark.start
        longestHold = max(longestHold, held)
        if let before = mark.usage, let after = ThreadUsage(), after.voluntarySwitches > before.voluntarySwitches {
            longestBlock = max(longestBlock, held - (after.cpu - before.cpu))
        }
    }
}

/// The calling thread's CPU time and voluntary context switches; nil if `getrusage` fails.
fileprivate struct ThreadUsage: Sendable {
    var cpu: Duration
    var voluntarySwitches: Int

    init?() {
        var usage = rusage()
        // RUSAGE_THREAD (Linux): <sys/resource.h> defines it only under _GNU_SOURCE.
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return nil }
        func duration(_ t: timeval) -> Duration { .seconds(Int64(t.tv_sec)) + .microseconds(Int64(t.tv_usec)) }
        cpu = duration(usage.ru_utime) + duration(usage.ru_stime)
        voluntarySwitches = Int(usage.ru_nvcsw)
    }
}
