extension MainLoop {
    /// A loop over a new `ManualPoller` whose clock starts at `start`, for tests.
    public static func manual(startingAt start: MonotonicInstant = MonotonicInstant(nanoseconds: 0)) -> (loop: MainLoop, poller: ManualPoller) {
        let poller = ManualPoller(now: start)
        return (MainLoop(poller: poller), poller)
    }

    /// For a loop over a `ManualPoller`: moves the clock forward by `duration` the way a real clock would reach
    /// the loop, stopping at each timer deadline on the way to run one iteration there, so timers fire in
    /// deadline order with `now` equal to their deadline (swift-nio's `EmbeddedEventLoop.advanceTime(by:)`).
    /// Timers that handlers add within the window fire too. No iteration runs at the end unless a timer is due
    /// there; call `runOnce(timeout: .zero)` for one.
    /// - Returns: the number of iterations run.
    @discardableResult
    public func advanceTime(by duration: Duration) -> Int {
        precondition(duration >= .zero, "MainLoop.advanceTime(by:): \(duration) is negative; the clock is monotonic")
        return advanceTime(to: now + duration)
    }

    /// For a loop over a `ManualPoller`: `advanceTime(by:)` up to `target`.
    /// - Returns: the number of iterations run.
    @discardableResult
    public func advanceTime(to target: MonotonicInstant) -> Int {
        guard let manual = poller as? ManualPoller else {
            preconditionFailure("MainLoop.advanceTime needs a loop over a ManualPoller; an epoll loop reads CLOCK_MONOTONIC")
        }
        var iterationsRun = 0
        while let next = nextTimerDeadline, next <= target {
            if next > manual.now { manual.advance(to: next) }
            runOnce(timeout: .zero)
            iterationsRun += 1
        }
        manual.advance(to: target)
        return iterationsRun
    }
}
