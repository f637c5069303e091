import Foundation
import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// A deadline for a test's wait on a child process: a child still running `seconds` after this was made is killed
/// (SIGKILL, which it cannot ignore), so that reading its output to the end and `waitUntilExit` return instead of
/// hanging the test. Made once the child runs; `finish()` once it has exited says whether it had to be killed.
public final class ProcessDeadline: Sendable {
    public let seconds: Double
    private let pid: Int32
    /// Whether the deadline passed (the child was killed), and whether it can no longer (the child was waited for).
    private let state = Lock((expired: false, finished: false))

    public init(_ process: Process, seconds: Double) {
        self.seconds = seconds
        pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
            state.withLock { state in
                // Under the lock: once `finish` has run, the pid may belong to another process. A child that never
                // ran has no pid (0 would name this process's group).
                guard !state.finished, pid > 0 else { return }
                state.expired = true
                kill(pid, SIGKILL)
            }
        }
    }

    /// Call after `waitUntilExit`: the deadline no longer applies. Throws naming `what` when the child had been
    /// killed at the deadline.
    public func finish(_ what: @autoclosure () -> String) throws {
        let expired = state.withLock { state in
            state.finished = true
            return state.expired
        }
        if expired { throw ControlTestError("\(what()) did not finish within \(seconds) s and was killed") }
    }

    /// Like `finish(_:)`, for a child whose lateness the test reports otherwise (its status says it was killed).
    public func cancel() {
        state.withLock { $0.finished = true }
    }
}
