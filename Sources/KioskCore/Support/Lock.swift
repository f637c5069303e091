#if canImport(Glibc)
import Glibc
#endif

/// A value that more than one thread reads and writes, guarded by a `pthread_mutex_t`: a render thread hands
/// finished work to the loop thread through one (kioskd's demo frame pump). Any thread may call `withLock`.
///
/// `Synchronization.Mutex` would be the obvious choice, but on Linux it waits on raw futexes, which
/// ThreadSanitizer does not model: under `--sanitize=thread`, once threads contend for it, accesses to the value
/// it guards are reported as races that cannot happen, and real races drown among them. TSan intercepts the
/// pthread mutex calls, so it sees this lock's happens-before edges and reports only real races.
///
/// The mutex lives on the heap because a `pthread_mutex_t` must not move once initialised, and a stored
/// property has no stable address.
public final class Lock<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: sending Value) {
        mutex = makeHeapMutex(owner: "Lock<\(Value.self)>")
        self.value = value
    }

    deinit {
        let status = pthread_mutex_destroy(mutex)
        precondition(status == 0, "\(SystemError("pthread_mutex_destroy (Lock<\(Value.self)>)", errno: status))")
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock. `body` must not call `withLock` on the same lock.
    public func withLock<R>(_ body: (inout sending Value) throws -> sending R) rethrows -> sending R {
        let status = pthread_mutex_lock(mutex)
        precondition(status == 0, "\(SystemError("pthread_mutex_lock (Lock<\(Value.self)>)", errno: status))")
        defer {
            let status = pthread_mutex_unlock(mutex)
            precondition(status == 0, "\(SystemError("pthread_mutex_unlock (Lock<\(Value.self)>)", errno: status))")
        }
        return try body(&value)
    }
}

/// A heap-allocated, initialised `pthread_mutex_t` for `Lock` and `ConditionLock`. In debug builds it is an
/// error-checking mutex: locking it twice from one thread (a nested `withLock`) then fails a precondition naming
/// EDEADLK instead of hanging. The owner destroys and deallocates it.
func makeHeapMutex(owner: @autoclosure () -> String) -> UnsafeMutablePointer<pthread_mutex_t> {
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    defer { pthread_mutexattr_destroy(&attributes) }
    #if DEBUG
    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
    #endif
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    let status = pthread_mutex_init(mutex, &attributes)
    precondition(status == 0, "\(SystemError("pthread_mutex_init (\(owner()))", errno: status))")
    return mutex
}
