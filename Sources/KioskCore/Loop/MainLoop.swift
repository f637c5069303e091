import Logging
#if canImport(Glibc)
import Glibc
#endif

/// When an observer runs (CFRunLoopActivity counterparts).
public struct LoopActivities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Each iteration, just before the loop sleeps (kCFRunLoopBeforeWaiting).
    public static let beforeWaiting = LoopActivities(rawValue: 1 << 0)
    /// Once, when `run()` returns (kCFRunLoopExit).
    public static let exit = LoopActivities(rawValue: 1 << 1)
}

/// Observer orders; lower runs first. The commit observer is last, as YYTransaction's 0xFFFFFF is.
public enum ObserverOrder {
    public static let animations = 100
    public static let layout = 200
    public static let render = 300
    public static let commit = 0xFFFFFF
}

private let logger = Logger(label: "kioskd.loop")

/// kioskd's run loop, the Linux counterpart of CFRunLoop: file descriptor sources, timers, ordered observers,
/// wakers for other threads and signals, multiplexed by a `Poller` (epoll in production, a manual clock in tests;
/// the loop logic is the same for both).
///
/// One iteration (`runOnce(timeout:)`):
/// 1. `.beforeWaiting` observers, ascending `order` (ties in registration order), each at most once;
/// 2. wait until a descriptor is ready, a waker is woken, a signal arrives, the next timer is due, or the
///    requested timeout passes, whichever comes first;
/// 3. handlers of ready sources, then of arrived signals;
/// 4. due timers, in deadline order;
/// 5. handlers of woken wakers.
///
/// Handlers may add sources, timers and observers (an observer added during an iteration runs from the next
/// one) and cancel any handle, their own included; a handle cancelled during an iteration does not run later in
/// it. The loop holds its handlers strongly: a handler that captures the loop keeps it alive until cancelled.
///
/// Lives on the main thread: make it there and call it only from there. `Waker.wake()` is the way in from
/// other threads.
public final class MainLoop {
    let poller: any Poller
    private let owner = pthread_self()
    private var sources: [Int32: SourceHandle] = [:]
    private var timers = TimerQueue()
    /// Sorted by (order, sequence).
    private var observers: [ObserverHandle] = []
    private var wakers: [(waker: Waker, handler: () -> Void)] = []
    private var signalHandlers: [Int32: (Int32) -> Void] = [:]
    private var nextSequence: UInt64 = 0
    private var isIterating = false
    private var isRunning = false
    private var stopRequested = false

    /// Iterations run so far.
    public private(set) var iterations = 0

    /// Iterations in which something happened: a source was ready, a signal arrived, a waker or the poller was
    /// woken, or a timer was due. The rest returned because the requested timeout passed, or woke for nothing;
    /// since `run()` never times out, `iterations - wakeups` over a `run()` counts wake-ups for nothing. An idle
    /// kiosk gains one wakeup per firing of its own timers and no more.
    public private(set) var wakeups = 0

    /// A loop over `poller`. Production code uses `MainLoop.epoll()`; tests use `MainLoop.manual()`.
    public init(poller: any Poller) {
        self.poller = poller
    }

    /// A loop over epoll, its timerfd, eventfd and signalfd (`EpollPoller`).
    public static func epoll() throws -> MainLoop {
        MainLoop(poller: try EpollPoller())
    }

    /// The poller's clock: CLOCK_MONOTONIC in production, the manual clock in tests.
    public var now: MonotonicInstant { poller.now }

    /// The earliest deadline of a pending timer: how long the loop may sleep when nothing else happens.
    public var nextTimerDeadline: MonotonicInstant? { timers.nextDeadline }

    /// When the loop last came back from waiting: the health signal's proof that the loop turns.
    public private(set) var lastWake: MonotonicInstant?

    // MARK: Sources

    /// Watches `fd` and calls `handler` with the ready events (`events`, plus `.hangup` and `.error`, which are
    /// always reported) in step 3 of each iteration in which it is ready; watching is level-triggered. The loop
    /// does not own or close `fd`; cancel the source before closing it. One source per fd.
    ///
    /// - Throws: `LoopError` naming the fd and errno, e.g. `epoll_ctl(ADD) fd 7: EBADF (Bad file descriptor)`;
    ///   `EEXIST` when the fd is already watched, `EPERM` for a regular file.
    @discardableResult
    public func addSource(fd: Int32, events: IOEvents, _ handler: @escaping (IOEvents) -> Void) throws -> SourceHandle {
        assertOnLoopThread()
        try poller.register(fd: fd, events: events)
        // The poller accepted the fd, so an entry still here belonged to a descriptor that was closed without
        // cancelling its source (epoll drops closed fds on its own); it must not receive the new fd's events.
        sources[fd]?.detach()
        let source = SourceHandle(fd: fd, events: events, handler: handler, loop: self)
        sources[fd] = source
        return source
    }

    func removeSource(_ source: SourceHandle) {
        assertOnLoopThread()
        guard sources[source.fd] === source else { return }
        sources[source.fd] = nil
        do {
            try poller.unregister(fd: source.fd)
        } catch {
            // Only when the fd was closed before its source was cancelled, which epoll already cleaned up.
            logger.debug("source fd \(source.fd): unregistering after close: \(error)")
        }
    }

    func modifySource(_ source: SourceHandle, events: IOEvents) throws {
        assertOnLoopThread()
        try poller.modify(fd: source.fd, events: events)
    }

    // MARK: Timers

    /// Calls `handler` once `delay` has passed, and then every `interval` if one is given.
    @discardableResult
    public func addTimer(after delay: Duration, repeating interval: Duration? = nil, _ handler: @escaping () -> Void) -> TimerHandle {
        addTimer(at: now + delay, repeating: interval, handler)
    }

    /// Calls `handler` in the first iteration at or after `deadline` (step 4), and then every `interval` if one
    /// is given. A repeating timer re-arms from its previous deadline, so it does not drift; periods it missed
    /// while the loop was busy are skipped, never fired as a burst.
    @discardableResult
    public func addTimer(at deadline: MonotonicInstant, repeating interval: Duration? = nil, _ handler: @escaping () -> Void) -> TimerHandle {
        assertOnLoopThread()
        let intervalNanoseconds = interval.map { interval -> UInt64 in
            let nanoseconds = interval.nanosecondsClamped
            precondition(nanoseconds > 0, "MainLoop.addTimer: repeating interval \(interval) is not positive")
            return UInt64(nanoseconds)
        }
        let timer = TimerHandle(
            deadline: deadline, intervalNanoseconds: intervalNanoseconds, sequence: takeSequence(), handler: handler, loop: self
        )
        timers.insert(timer)
        return timer
    }

    func removeTimer(_ timer: TimerHandle) {
        assertOnLoopThread()
        timers.remove(timer)
    }

    // MARK: Observers

    /// Calls `handler` with the activity for each of `activities`: `.beforeWaiting` every iteration just before
    /// the loop waits, `.exit` once when `run()` returns. Lower `order` runs first (see `ObserverOrder`); equal
    /// orders run in registration order.
    @discardableResult
    public func addObserver(order: Int, activities: LoopActivities, _ handler: @escaping (LoopActivities) -> Void) -> ObserverHandle {
        assertOnLoopThread()
        let observer = ObserverHandle(order: order, activities: activities, sequence: takeSequence(), handler: handler, loop: self)
        let index = observers.firstIndex { $0.order > order } ?? observers.endIndex
        observers.insert(observer, at: index)
        return observer
    }

    func removeObserver(_ observer: ObserverHandle) {
        assertOnLoopThread()
        observers.removeAll { $0 === observer }
    }

    // MARK: Wakers and signals

    /// A waker whose `wake()`, from any thread, makes the loop run `handler` on the loop thread in the next
    /// iteration (step 5). Wakes are coalesced: several before the loop gets to them run the handler once.
    /// The loop keeps the waker and its handler for its whole life.
    public func makeWaker(_ handler: @escaping () -> Void) throws -> Waker {
        assertOnLoopThread()
        let waker = Waker(wakeup: poller.wakeup)
        wakers.append((waker, handler))
        return waker
    }

    /// Delivers `signals` to `handler`, with the signal number, on the loop thread (step 3, after sources),
    /// instead of their default action. A later call for the same signal replaces its handler.
    ///
    /// With epoll the signals are blocked in the calling thread (`pthread_sigmask`) and read from a signalfd.
    /// Call it on the main thread before any other thread is started: threads inherit the mask of the thread
    /// that creates them, and a signal sent to the process goes to any thread that does not block it, where the
    /// default action of SIGTERM, SIGINT or SIGHUP ends the process. The mask also survives fork and exec:
    /// reset it in child processes (`posix_spawnattr_setsigmask`), or they cannot be stopped with those signals.
    public func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws {
        assertOnLoopThread()
        try poller.watchSignals(signals)
        for signal in signals { signalHandlers[signal] = handler }
    }

    // MARK: Running

    /// Runs iterations until `stop()`, then the `.exit` observers, once each, in order.
    public func run() {
        assertOnLoopThread()
        precondition(!isRunning && !isIterating, "MainLoop.run: the loop is already running; runs do not nest")
        isRunning = true
        stopRequested = false
        while !stopRequested {
            runOnce(timeout: nil)
        }
        isRunning = false
        stopRequested = false
        runObservers(.exit)
    }

    /// Ends `run()` once the iteration in progress has finished; does nothing outside `run()`. The iteration
    /// does not sleep after a stop, so stopping from an observer returns promptly.
    ///
    /// Main thread only. To stop from another thread (a worker, a watchdog), make a waker at startup whose
    /// handler calls `stop()`, and wake it there.
    public func stop() {
        assertOnLoopThread()
        if isRunning { stopRequested = true }
    }

    /// Runs one iteration (see the type's documentation), waiting at most `timeout` for something to happen;
    /// `nil` waits until something does, `.zero` only polls.
    public func runOnce(timeout: Duration? = nil) {
        assertOnLoopThread()
        precondition(!isIterating, "MainLoop.runOnce: called from a handler of the same loop; iterations do not nest")
        isIterating = true
        defer { isIterating = false }
        iterations += 1

        // 1. Observers.
        runObservers(.beforeWaiting)

        // 2. Wait.
        let start = poller.now
        var deadline = timeout.map { start + max($0, .zero) }
        if let next = timers.nextDeadline {
            deadline = min(deadline ?? next, next)
        }
        if stopRequested {
            deadline = start
        }
        let result = poller.wait(until: deadline)
        lastWake = poller.now

        // Sources are looked up before any handler runs: a handler may cancel a source and add one for a
        // reused fd number, and the old descriptor's readiness must not reach the new source.
        let ready = result.events.compactMap { event in sources[event.fd].map { (source: $0, events: event.events) } }
        let due = timers.popDue(at: poller.now)
        var somethingHappened = !result.isEmpty || !due.isEmpty

        // 3. Sources, then signals.
        for (source, events) in ready {
            let wanted = events.intersection(source.events.union([.hangup, .error]))
            guard !wanted.isEmpty, !source.isCancelled, let handler = source.handler else { continue }
            handler(wanted)
        }
        for signal in result.signals {
            signalHandlers[signal]?(signal)
        }

        // 4. Timers.
        for timer in due {
            guard !timer.isFinished, let handler = timer.handler else { continue }
            handler()
            rearmOrFinish(timer)
        }

        // 5. Wakers.
        for entry in wakers where entry.waker.consumeWake() {
            somethingHappened = true
            entry.handler()
        }

        if somethingHappened { wakeups += 1 }
    }

    private func rearmOrFinish(_ timer: TimerHandle) {
        guard !timer.isFinished else { return }  // cancelled by its own handler
        guard let interval = timer.intervalNanoseconds else {
            timer.isFinished = true
            timer.handler = nil
            return
        }
        // The next period after now, counted from the previous deadline: no drift, and no burst of the periods
        // the loop missed while it was busy (or the manual clock jumped).
        let now = poller.now.nanoseconds
        let elapsed = now > timer.deadline.nanoseconds ? now - timer.deadline.nanoseconds : 0
        let periods = elapsed / interval + 1
        let (offset, overflow) = periods.multipliedReportingOverflow(by: interval)
        timer.deadline = MonotonicInstant(nanoseconds: overflow ? .max : timer.deadline.nanoseconds &+ offset)
        timer.sequence = takeSequence()
        timers.insert(timer)
    }

    private func runObservers(_ activity: LoopActivities) {
        // Iterating a copy: an observer added meanwhile waits for the next iteration, and none runs twice.
        for observer in observers where observer.activities.contains(activity) {
            guard !observer.isCancelled, let handler = observer.handler else { continue }
            handler(activity)
        }
    }

    private func takeSequence() -> UInt64 {
        nextSequence += 1
        return nextSequence
    }

    /// In every debug-configuration build, `-O` ones too (the test bundle test-all builds), not in a release build.
    private func assertOnLoopThread(_ function: StaticString = #function) {
        #if DEBUG
        precondition(pthread_equal(owner, pthread_self()) != 0, "MainLoop.\(function) called off the loop's thread; only Waker.wake() may be")
        #endif
    }
}
