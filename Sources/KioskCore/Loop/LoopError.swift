#if canImport(Glibc)
import Glibc
#endif

/// A failed system call of the loop, naming the call, the object it was made on, and the errno:
/// `epoll_ctl(ADD) fd 7: EBADF (Bad file descriptor)`. A plain value; crosses threads freely.
public struct LoopError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed, e.g. `epoll_ctl(ADD)`.
    public let operation: String
    /// What it was made on, e.g. `fd 7`; empty when the call has no object (creating an epoll instance).
    public let object: String
    /// The errno value the call left.
    public let errno: Int32

    public init(operation: String, object: String, errno: Int32) {
        self.operation = operation
        self.object = object
        self.errno = errno
    }

    /// The symbolic name of `errno` (`EBADF`), or `errno 123` for values without one here.
    public var errnoName: String { KioskCore.errnoName(errno) }

    public var description: String {
        let subject = object.isEmpty ? operation : "\(operation) \(object)"
        return "\(subject): \(errnoDescription(errno))"
    }
}
