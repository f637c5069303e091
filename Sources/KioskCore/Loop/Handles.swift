/// A file descriptor the loop watches; `MainLoop.addSource` returns it. The loop does not own the descriptor:
/// cancel the source before closing the fd, since epoll forgets a closed fd on its own and a new fd may reuse
/// the number.
///
/// Lives on the main thread.
public final class SourceHandle {
    /// The watched descriptor.
    public let fd: Int32
    /// The events the handler is called for, besides `.hangup` and `.error`, which are always reported.
    public private(set) var events: IOEvents
    /// Whether `cancel()` was called.
    public private(set) var isCancelled = false

    var handler: ((IOEvents) -> Void)?
    weak var loop: MainLoop?

    init(fd: Int32, events: IOEvents, handler: @escaping (IOEvents) -> Void, loop: MainLoop) {
        self.fd = fd
        self.events = events
        self.handler = handler
        self.loop = loop
    }

    /// Stops watching the fd. Safe from any handler, this source's own included; once cancelled the handler
    /// is not called again, not even for events of the iteration in progress. Idempotent.
    public func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        // Dropping the handler breaks the cycle when it captures its own handle.
        handler = nil
        loop?.removeSource(self)
    }

    /// Marks the source dead without touching the poller, whose registration for the fd number now belongs
    /// to another descriptor.
    func detach() {
        isCancelled = true
        handler = nil
        loop = nil
    }

    /// Changes the events to watch for, e.g. adding `.writable` while output is queued.
    public func updateEvents(_ events: IOEvents) throws {
        guard !isCancelled, let loop else { return }
        try loop.modifySource(self, events: events)
        self.events = events
    }
}

/// A one-shot or repeating timer; `MainLoop.addTimer` returns it.
///
/// Lives on the main thread.
public final class TimerHandle {
    /// Time between firings of a repeating timer, in nanoseconds; `nil` for a one-shot timer.
    let intervalNanoseconds: UInt64?
    var deadline: MonotonicInstant
    /// Breaks deadline ties: equal deadlines fire in the order they were scheduled.
    var sequence: UInt64
    /// Position in the loop's timer queue while scheduled; `nil` while firing or finished.
    var queueIndex: Int?
    var handler: (() -> Void)?
    /// Cancelled, or a one-shot timer that has fired.
    var isFinished = false
    weak var loop: MainLoop?

    init(deadline: MonotonicInstant, intervalNanoseconds: UInt64?, sequence: UInt64, handler: @escaping () -> Void, loop: MainLoop) {
        self.deadline = deadline
        self.intervalNanoseconds = intervalNanoseconds
        self.sequence = sequence
        self.handler = handler
        self.loop = loop
    }

    /// When the timer fires next; `nil` once it is cancelled or, for a one-shot timer, has fired.
    public var nextDeadline: MonotonicInstant? { isFinished ? nil : deadline }

    /// Stops the timer. Safe from any handler, this timer's own included (a repeating timer then does not
    /// re-arm); a timer due in the iteration in progress does not fire once cancelled. Idempotent.
    public func cancel() {
        guard !isFinished else { return }
        isFinished = true
        handler = nil
        loop?.removeTimer(self)
    }
}

/// An observer of loop activities; `MainLoop.addObserver` returns it.
///
/// Lives on the main thread.
public final class ObserverHandle {
    let order: Int
    let activities: LoopActivities
    /// Breaks order ties: equal orders run in registration order.
    let sequence: UInt64
    var handler: ((LoopActivities) -> Void)?
    var isCancelled = false
    weak var loop: MainLoop?

    init(order: Int, activities: LoopActivities, sequence: UInt64, handler: @escaping (LoopActivities) -> Void, loop: MainLoop) {
        self.order = order
        self.activities = activities
        self.sequence = sequence
        self.handler = handler
        self.loop = loop
    }

    /// Removes the observer. Safe from any handler, this observer's own included; an observer cancelled
    /// during an iteration does not run later in that iteration. Idempotent.
    public func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        handler = nil
        loop?.removeObserver(self)
    }
}
