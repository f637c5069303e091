#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a `pthread_mutex_t`, with a `pthread_cond_t` to sleep on until it changes: the render pool's
/// job queues, shared by the main thread (which submits) and the workers (which wait for work).
///
/// `Lock<Value>` has no condition variable, and `Synchronization.Mutex` waits on futexes that ThreadSanitizer does
/// not model; TSan intercepts the pthread calls, so it sees the happens-before edges of this lock. Mutex and
/// condition live on the heap because neither may move once initialised.
final class ConditionLock<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    init(_ value: sending Value) {
        mutex = makeHeapMutex(owner: "ConditionLock<\(Value.self)>")
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let status = pthread_cond_init(condition, nil)
        precondition(status == 0, "\(SystemError("pthread_cond_init (ConditionLock<\(Value.self)>)", errno: status))")
        self.value = value
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deinitialize(count: 1)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    func withLock<R>(_ body: (inout sending Value) throws -> sending R) rethrows -> sending R {
        lock()
        defer { unlock() }
        return try body(&value)
    }

    /// Holds the lock, sleeping on the condition until `body` returns a result (non-nil), and returns it. `body`
    /// runs again after every `broadcast()`.
    func waitUntil<R>(_ body: (inout sending Value) -> sending R?) -> sending R {
        lock()
        defer { unlock() }
        while true {
            if let result = body(&value) { return result }
            let status = pthread_cond_wait(condition, mutex)
            precondition(status == 0, "\(SystemError("pthread_cond_wait (ConditionLock<\(Value.self)>)", errno: status))")
        }
    }

    /// Wakes every thread in `waitUntil`, to re-check the value.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }

    private func lock() {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "\(SystemError("pthread_mutex_lock (ConditionLock<\(Value.self)>)", errno: status))")
    }

    private func unlock() {
        let status = pthread_mutex_unlock(mutex)
        precondition(status == 0, "\(SystemError("pthread_mutex_unlock (ConditionLock<\(Value.self)>)", errno: status))")
    }
}
