import KioskCore

/// Runs a loop on a manual clock the way `MainLoop.run()` would for `duration`: `settle` runs the iterations due
/// at the current instant until nothing is left to do, then the clock jumps to the next timer (as epoll would
/// sleep until it), until `duration` has passed. With `settlingAtEnd`, the iterations due at the end run too.
public func runManualTime(_ loop: MainLoop, _ poller: ManualPoller, for duration: Duration, settlingAtEnd: Bool,
                          settle: () -> Void) {
    let end = loop.now + duration
    while true {
        settle()
        guard let next = loop.nextTimerDeadline, next <= end else { break }
        poller.advance(to: max(next, loop.now))
    }
    poller.advance(to: end)
    if settlingAtEnd { settle() }
}
