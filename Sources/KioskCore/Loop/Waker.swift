import Synchronization

/// Runs a handler on the loop thread on behalf of another thread: a render worker calls `wake()` when its
/// result is ready, and the loop runs the handler in its next iteration (step 5, after timers).
///
/// The one loop object that crosses threads: `wake()` is safe from any thread and coalesced, so any number of
/// wakes before the loop gets to them run the handler once. The handler itself stays with the loop and never
/// leaves its thread. The loop keeps every waker it made for its whole life: make one per purpose at startup,
/// not one per event.
public final class Waker: Sendable {
    private let pending = Atomic<Bool>(false)
    private let wakeup: any PollerWakeup

    init(wakeup: any PollerWakeup) {
        self.wakeup = wakeup
    }

    /// Asks the loop to run this waker's handler. Returns at once; callable from any thread.
    public func wake() {
        // Only the first wake since the handler last ran needs to reach the poller.
        guard !pending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        wakeup.wake()
    }

    /// On the loop thread: whether `wake()` was called since the last time, clearing it. Cleared before the
    /// handler runs, so a wake during the handler schedules it again.
    func consumeWake() -> Bool {
        pending.exchange(false, ordering: .sequentiallyConsistent)
    }
}
