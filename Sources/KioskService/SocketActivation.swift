import Glibc
import KioskCore

/// Sockets systemd passed this process (socket activation, as sd_listen_fds_with_names(3) defines it). The variables are
/// removed once read, so children do not take the sockets for theirs. A plain value made on the main thread.
public struct SocketActivation: Sendable {
    public struct Socket: Sendable, Equatable {
        public var fd: Int32
        /// `FileDescriptorName=` of the socket unit; systemd's default is the unit's name.
        public var name: String
    }

    public private(set) var sockets: [Socket] = []

    /// Reads `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` (`SystemdProtocol.listenFds`), and removes them.
    /// - Throws: `SystemError` naming the variable when one is malformed.
    public static func fromEnvironment() throws -> SocketActivation {
        defer { for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) } }
        var result = SocketActivation()
        result.sockets = try SystemdProtocol.listenFds().map { Socket(fd: $0.fd, name: $0.name) }
        return result
    }

    /// The socket named `name`; a lone socket whatever its name (systemd calls an unnamed one `unknown`).
    public func socket(named name: String) -> Int32? {
        if let match = sockets.first(where: { $0.name == name }) { return match.fd }
        return sockets.count == 1 ? sockets[0].fd : nil
    }
}
