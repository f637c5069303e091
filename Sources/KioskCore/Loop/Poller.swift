/// Readiness conditions of a file descriptor. A plain value.
public struct IOEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: 1 << 0)
    public static let writable = IOEvents(rawValue: 1 << 1)
    public static let hangup = IOEvents(rawValue: 1 << 2)
    public static let error = IOEvents(rawValue: 1 << 3)
}

/// One ready file descriptor, as a poller reports it. A plain value.
public struct PollEvent: Sendable, Hashable {
    public var fd: Int32
    public var events: IOEvents

    public init(fd: Int32, events: IOEvents) {
        self.fd = fd
        self.events = events
    }
}

/// What one `Poller.wait(until:)` returned. A plain value.
public struct PollResult: Sendable, Hashable {
    /// Registered descriptors that are ready, in the order the poller saw them.
    public var events: [PollEvent]
    /// Watched signals that arrived, in arrival order; a standard signal raised twice before the wait returns
    /// is reported once, as the kernel coalesces it.
    public var signals: [Int32]
    /// Whether `PollerWakeup.wake()` was called since the previous wait.
    public var woken: Bool

    public init(events: [PollEvent] = [], signals: [Int32] = [], woken: Bool = false) {
        self.events = events
        self.signals = signals
        self.woken = woken
    }

    /// Whether anything happened, as opposed to the deadline passing (or a zero wait) with nothing to report.
    public var isEmpty: Bool { events.isEmpty && signals.isEmpty && !woken }
}

/// Interrupts a poller's wait from any thread. Lives as long as anyone holds it; `wake()` is thread-safe and
/// coalesced: a wake that is already pending is not signalled again.
public protocol PollerWakeup: AnyObject, Sendable {
    func wake()
}

/// The operating-system half of `MainLoop`: it watches descriptors and sleeps until one is ready, a deadline
/// passes, or `wakeup` is woken. Everything else (timers, observers, dispatch order) lives in `MainLoop`, so the
/// same loop logic runs over `EpollPoller` in production and `ManualPoller` in tests.
///
/// Lives on the loop's thread (the main thread), except `wakeup`, which is `Sendable`.
public protocol Poller: AnyObject {
    /// The poller's clock: CLOCK_MONOTONIC for epoll, a hand-moved clock for the manual poller.
    var now: MonotonicInstant { get }

    /// Interrupts `wait(until:)` from any thread.
    var wakeup: any PollerWakeup { get }

    /// Starts watching `fd` for `events`; `.hangup` and `.error` are always reported. Throws when the fd is
    /// invalid, already watched (`EEXIST`), or cannot be polled (`EPERM` for a regular file).
    func register(fd: Int32, events: IOEvents) throws

    /// Changes the events a watched fd is watched for.
    func modify(fd: Int32, events: IOEvents) throws

    /// Stops watching `fd`. The poller never closes a descriptor it did not create.
    func unregister(fd: Int32) throws

    /// Starts reporting `signals` through `PollResult.signals` instead of their default action. Adds to the
    /// signals already watched.
    func watchSignals(_ signals: [Int32]) throws

    /// Waits until something is ready or `deadline` passes; `nil` waits with no deadline, and a deadline at or
    /// before `now` only polls. Never returns before `deadline` unless something happened.
    ///
    /// A deadline rather than a timeout, so the epoll poller can arm its timerfd at the exact instant of the
    /// next timer (`TFD_TIMER_ABSTIME`); a relative timeout would drift by the time spent computing it.
    func wait(until deadline: MonotonicInstant?) -> PollResult
}
