#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The deterministic poller for tests, the counterpart of swift-nio's `EmbeddedEventLoop`: the clock moves
/// only by `advance(by:)` / `advance(to:)`, `wait(until:)` never blocks and never moves the clock, descriptors
/// are fakes that a test marks ready with `signalReady(fd:events:)`, and signals are injected with
/// `deliverSignal(_:)` without raising or blocking anything in the process. `MainLoop.advanceTime(by:)` steps
/// a loop over it from timer to timer.
///
/// Lives on the test's thread (the loop's thread); only `wakeup` is used from other threads.
public final class ManualPoller: Poller {
    /// The manual clock.
    public private(set) var now: MonotonicInstant

    private let manualWakeup = ManualWakeup()
    private var registered: [Int32: IOEvents] = [:]
    /// Readiness waiting for the next `wait`, one entry per fd, in the order the fds were first signalled.
    private var pendingReady: [PollEvent] = []
    private var watched: Set<Int32> = []
    private var pendingSignals: [Int32] = []

    /// How many times the loop has waited.
    public private(set) var waitCount = 0
    /// The deadline of the most recent wait; `nil` when it had none (an epoll loop would have slept until
    /// something happened) or no wait happened yet (`waitCount` is 0).
    public private(set) var lastWaitDeadline: MonotonicInstant?

    public var wakeup: any PollerWakeup { manualWakeup }

    /// How many wakes reached the poller; wakes of a `Waker` that was already woken do not.
    public var wakeupsSignalled: Int { manualWakeup.signalled }

    /// The signals a loop has asked to watch.
    public var watchedSignals: Set<Int32> { watched }

    /// A poller whose clock reads `now` until advanced.
    public init(now: MonotonicInstant = MonotonicInstant(nanoseconds: 0)) {
        self.now = now
    }

    // MARK: Test controls

    /// Moves the clock forward by `duration`. Runs nothing: a loop notices in its next iteration.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "ManualPoller.advance(by:): \(duration) is negative; the clock is monotonic")
        now = now + duration
    }

    /// Moves the clock forward to `instant`. Runs nothing: a loop notices in its next iteration.
    public func advance(to instant: MonotonicInstant) {
        precondition(instant >= now, "ManualPoller.advance(to:): \(instant) is before now (\(now)); the clock is monotonic")
        now = instant
    }

    /// Makes the fake `fd` report `events` at the next wait, filtered as epoll would: only a registered fd is
    /// reported, with the events it is registered for plus `.hangup` and `.error`. Unlike a real descriptor,
    /// the readiness is reported once, not until drained; signal it again to report it again.
    public func signalReady(fd: Int32, events: IOEvents) {
        if let index = pendingReady.firstIndex(where: { $0.fd == fd }) {
            pendingReady[index].events.formUnion(events)
        } else {
            pendingReady.append(PollEvent(fd: fd, events: events))
        }
    }

    /// Makes `signal` arrive at the next wait, if a loop watches it (`MainLoop.onSignals`). Like the kernel,
    /// a signal delivered again before the wait is reported once.
    /// - Returns: whether the signal is watched; an unwatched one is dropped.
    @discardableResult
    public func deliverSignal(_ signal: Int32) -> Bool {
        guard watched.contains(signal) else { return false }
        if !pendingSignals.contains(signal) { pendingSignals.append(signal) }
        return true
    }

    /// The events `fd` is registered for; `nil` when it is not registered.
    public func registeredEvents(fd: Int32) -> IOEvents? {
        registered[fd]
    }

    /// Every registered fd with the events it is registered for: lets a test that gives the loop real descriptors
    /// (sockets, pipes) find which are ready itself and report them with `signalReady(fd:events:)`.
    public var registeredDescriptors: [Int32: IOEvents] { registered }

    // MARK: Poller

    public func register(fd: Int32, events: IOEvents) throws {
        guard fd >= 0 else { throw LoopError(operation: "ManualPoller.register", object: "fd \(fd)", errno: EBADF) }
        guard registered[fd] == nil else { throw LoopError(operation: "ManualPoller.register", object: "fd \(fd)", errno: EEXIST) }
        registered[fd] = events
    }

    public func modify(fd: Int32, events: IOEvents) throws {
        guard registered[fd] != nil else { throw LoopError(operation: "ManualPoller.modify", object: "fd \(fd)", errno: ENOENT) }
        registered[fd] = events
    }

    public func unregister(fd: Int32) throws {
        guard registered.removeValue(forKey: fd) != nil else {
            throw LoopError(operation: "ManualPoller.unregister", object: "fd \(fd)", errno: ENOENT)
        }
        pendingReady.removeAll { $0.fd == fd }
    }

    public func watchSignals(_ signals: [Int32]) throws {
        for signal in signals where signal <= 0 || signal >= 65 || signal == SIGKILL || signal == SIGSTOP {
            throw LoopError(operation: "watchSignals", object: "signal \(signal)", errno: EINVAL)
        }
        watched.formUnion(signals)
    }

    public func wait(until deadline: MonotonicInstant?) -> PollResult {
        waitCount += 1
        lastWaitDeadline = deadline
        let events = pendingReady.compactMap { event -> PollEvent? in
            guard let interest = registered[event.fd] else { return nil }
            let reported = event.events.intersection(interest.union([.hangup, .error]))
            return reported.isEmpty ? nil : PollEvent(fd: event.fd, events: reported)
        }
        let signals = pendingSignals
        pendingReady = []
        pendingSignals = []
        return PollResult(events: events, signals: signals, woken: manualWakeup.consume())
    }
}

/// The manual poller's wake flag. `wake()` runs on any thread; `consume()` on the loop thread.
final class ManualWakeup: PollerWakeup {
    private let pending = Atomic<Bool>(false)
    private let signalCount = Atomic<Int>(0)

    var signalled: Int { signalCount.load(ordering: .sequentiallyConsistent) }

    func wake() {
        signalCount.add(1, ordering: .sequentiallyConsistent)
        pending.store(true, ordering: .sequentiallyConsistent)
    }

    func consume() -> Bool {
        pending.exchange(false, ordering: .sequentiallyConsistent)
    }
}
