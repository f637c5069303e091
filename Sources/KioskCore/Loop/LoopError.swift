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
    public var errnoName: String { Self.name(ofErrno: errno) }

    public var description: String {
        let subject = object.isEmpty ? operation : "\(operation) \(object)"
        return "\(subject): \(errnoName) (\(String(cString: strerror(errno))))"
    }

    /// Names of the errno values the loop's calls document; the rest print as numbers.
    static func name(ofErrno value: Int32) -> String {
        switch value {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case ESRCH: "ESRCH"
        case EINTR: "EINTR"
        case EIO: "EIO"
        case EBADF: "EBADF"
        case EAGAIN: "EAGAIN"
        case ENOMEM: "ENOMEM"
        case EACCES: "EACCES"
        case EFAULT: "EFAULT"
        case EBUSY: "EBUSY"
        case EEXIST: "EEXIST"
        case ENODEV: "ENODEV"
        case EINVAL: "EINVAL"
        case ENFILE: "ENFILE"
        case EMFILE: "EMFILE"
        case ENOSPC: "ENOSPC"
        case ELOOP: "ELOOP"
        case ENOSYS: "ENOSYS"
        default: "errno \(value)"
        }
    }
}
