import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// A filesystem Unix-domain socket address (`sockaddr_un`): the one place that checks a path fits `sun_path` and
/// hands the address to bind/connect. A plain value; usable from any thread.
public struct UnixSocketAddress: Sendable {
    public let path: String
    private let storage: sockaddr_un

    /// `sun_path` holds 108 bytes including the terminating NUL.
    public static var maximumPathBytes: Int { MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1 }

    /// Throws `SystemError` (ENAMETOOLONG) naming the path when it is empty or does not fit.
    public init(path: String) throws {
        guard !path.isEmpty, path.utf8.count <= Self.maximumPathBytes else {
            throw SystemError("control socket \(path): the path must be 1 to \(Self.maximumPathBytes) bytes", errno: ENAMETOOLONG)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        self.path = path
        self.storage = address
    }

    /// `bind(fd, address)`: 0 or -1 with errno set, as the system call.
    public func bind(_ fd: Int32) -> Int32 {
        withSockaddr { Glibc.bind(fd, $0, $1) }
    }

    /// `connect(fd, address)`: 0 or -1 with errno set, as the system call.
    public func connect(_ fd: Int32) -> Int32 {
        withSockaddr { Glibc.connect(fd, $0, $1) }
    }

    private func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
