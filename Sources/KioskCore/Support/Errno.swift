#if canImport(Glibc)
import Glibc
#endif

/// Names an errno value the way kernel and DRM documentation do: `EBUSY (Device or resource busy)`.
public func errnoDescription(_ code: Int32) -> String {
    let name: String? = switch code {
    case EPERM: "EPERM"
    case ENOENT: "ENOENT"
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
    case ENOSPC: "ENOSPC"
    case ERANGE: "ERANGE"
    case ENOSYS: "ENOSYS"
    case EOPNOTSUPP: "EOPNOTSUPP"
    case ETIMEDOUT: "ETIMEDOUT"
    case ENOTTY: "ENOTTY"
    case EADDRINUSE: "EADDRINUSE"
    case ECONNREFUSED: "ECONNREFUSED"
    case EPIPE: "EPIPE"
    default: nil
    }
    let text = String(cString: strerror(code))
    if let name { return "\(name) (\(text))" }
    return "errno \(code) (\(text))"
}

/// A failed system call: what was attempted, on which object, and the errno.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var errno: Int32
    public init(_ operation: String, errno: Int32) { self.operation = operation; self.errno = errno }
    public var description: String { "\(operation): \(errnoDescription(errno))" }
}
