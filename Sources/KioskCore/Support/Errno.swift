#if canImport(Glibc)
import Glibc
#endif

/// Names an errno value the way kernel and DRM documentation do: `EBUSY (Device or resource busy)`.
public func errnoDescription(_ code: Int32) -> String {
    "\(errnoName(code)) (\(String(cString: strerror(code))))"
}

/// The symbolic name of an errno value (`EBADF`), or `errno 123` for values without one here.
public func errnoName(_ code: Int32) -> String {
    switch code {
    case EPERM: "EPERM"
    case ENOENT: "ENOENT"
    case ESRCH: "ESRCH"
    case EINTR: "EINTR"
    case EIO: "EIO"
    case ENXIO: "ENXIO"
    case EBADF: "EBADF"
    case EAGAIN: "EAGAIN"
    case ENOMEM: "ENOMEM"
    case EACCES: "EACCES"
    case EFAULT: "EFAULT"
    case EBUSY: "EBUSY"
    case EEXIST: "EEXIST"
    case ENODEV: "ENODEV"
    case ENOTDIR: "ENOTDIR"
    case EINVAL: "EINVAL"
    case ENFILE: "ENFILE"
    case EMFILE: "EMFILE"
    case ENOTTY: "ENOTTY"
    case ENOSPC: "ENOSPC"
    case EPIPE: "EPIPE"
    case ERANGE: "ERANGE"
    case EDEADLK: "EDEADLK"
    case ENOSYS: "ENOSYS"
    case ELOOP: "ELOOP"
    case EOPNOTSUPP: "EOPNOTSUPP"
    case EADDRINUSE: "EADDRINUSE"
    case ECONNREFUSED: "ECONNREFUSED"
    case ETIMEDOUT: "ETIMEDOUT"
    default: "errno \(code)"
    }
}

/// A failed system call: what was attempted, on which object, and the errno when there is one
/// (`control socket /run/kioskd/control.sock: bind: EADDRINUSE (Address already in use)`).
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var errno: Int32?
    public init(_ operation: String, errno: Int32? = nil) { self.operation = operation; self.errno = errno }
    public var description: String {
        guard let errno else { return operation }
        return "\(operation): \(errnoDescription(errno))"
    }
}
