import CSystemd
import Glibc
import KioskCore

/// Sockets systemd passed this process (socket activation, sd_listen_fds_with_names(3)). The variables are
/// removed once read, so children do not take the sockets for theirs. A plain value made on the main thread.
public struct SocketActivation: Sendable {
    public struct Socket: Sendable, Equatable {
        public var fd: Int32
        /// `FileDescriptorName=` of the socket unit; systemd's default is the unit's name.
        public var name: String
    }

    public private(set) var sockets: [Socket] = []

    /// Reads `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` through libsystemd.
    /// - Throws: `SystemError` when the variables are malformed.
    public static func fromEnvironment() throws -> SocketActivation {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
        let count = sd_listen_fds_with_names(1, &names)
        guard count >= 0 else { throw SystemError("socket activation (LISTEN_FDS)", errno: -count) }
        var result = SocketActivation()
        for index in 0..<Int(count) {
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            result.sockets.append(Socket(fd: SD_LISTEN_FDS_START + Int32(index), name: name))
            free(names?[index])
        }
        free(names)
        return result
    }

    /// The socket named `name`; a lone socket whatever its name (systemd calls an unnamed one `unknown`).
    public func socket(named name: String) -> Int32? {
        if let match = sockets.first(where: { $0.name == name }) { return match.fd }
        return sockets.count == 1 ? sockets[0].fd : nil
    }
}
