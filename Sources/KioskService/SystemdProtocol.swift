import Glibc
import KioskCore

/// The three parts of systemd's service protocol kioskd speaks, read from the environment and written to the notify
/// socket directly: sd_notify(3), sd_watchdog_enabled(3) and sd_listen_fds_with_names(3) define them, and each is a
/// few lines. Linking libsystemd for them loaded it and five libraries of its own (libgcrypt, libgpg-error, liblz4,
/// libzstd, libcap) into every kioskd: 0.7 to 1.3 MB of peak resident memory at start (docs/design.md, "The
/// process") for code kioskd never calls.
///
/// Every malformed variable is an error that names it and its value. Plain functions of the environment.
public enum SystemdProtocol {
    /// The first file descriptor systemd passes (`SD_LISTEN_FDS_START`).
    public static let listenFdsStart: Int32 = 3

    /// Where `NOTIFY_SOCKET` points: a path (`/run/systemd/notify`) or an abstract name (`@...`).
    public enum NotifyAddress: Equatable, Sendable {
        case path(String)
        case abstract(String)

        /// Parses `NOTIFY_SOCKET`'s value.
        /// - Throws: `SystemError` naming the value when it is neither, empty, or too long for a Unix socket.
        public init(_ value: String) throws {
            let limit = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
            if value.hasPrefix("/") {
                guard value.utf8.count < limit else {
                    throw SystemError("NOTIFY_SOCKET=\(value): longer than a Unix socket path (\(limit - 1) bytes)")
                }
                self = .path(value)
            } else if value.hasPrefix("@"), value.utf8.count > 1 {
                guard value.utf8.count <= limit else {
                    throw SystemError("NOTIFY_SOCKET=\(value): longer than a Unix socket name (\(limit - 1) bytes)")
                }
                self = .abstract(String(value.dropFirst()))
            } else {
                throw SystemError("NOTIFY_SOCKET=\(value): neither a socket path (/...) nor an abstract socket (@...)")
            }
        }
    }

    /// Sends `state` (`READY=1\nSTATUS=...`) as one datagram to `address`, without blocking: a manager whose queue
    /// is full gets an error (EAGAIN) rather than a stalled frame path.
    /// - Throws: `SystemError` naming the socket and the errno.
    public static func notify(_ state: String, to address: NotifyAddress) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemError("notify socket: socket", errno: errno) }
        defer { close(fd) }
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let name: String, nameBytes: [UInt8]
        switch address {
        case .path(let path):
            name = path
            nameBytes = Array(path.utf8) + [0]
        case .abstract(let abstract):
            // An abstract name starts with a NUL and is exactly as long as the address length says.
            name = "@" + abstract
            nameBytes = [0] + Array(abstract.utf8)
        }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in nameBytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + nameBytes.count)
        let sent = state.utf8CString.withUnsafeBufferPointer { text in
            withUnsafePointer(to: &socketAddress) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, text.baseAddress, text.count - 1, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        guard sent >= 0 else { throw SystemError("notify socket \(name): sendto", errno: errno) }
    }

    /// `WATCHDOG_USEC` when it is meant for this process (`WATCHDOG_PID` unset or `pid`): nil when unset or for
    /// another process.
    /// - Throws: `SystemError` naming the variable when either is not a positive number.
    public static func watchdogMicroseconds(environment: (String) -> String? = Self.environment,
                                            pid: pid_t = getpid()) throws -> UInt64? {
        guard let text = environment("WATCHDOG_USEC") else { return nil }
        guard let microseconds = UInt64(text), microseconds > 0, microseconds != UInt64.max else {
            throw SystemError("WATCHDOG_USEC=\(text): not a positive number of microseconds")
        }
        if let owner = environment("WATCHDOG_PID") {
            guard let ownerPid = pid_t(owner), ownerPid > 0 else { throw SystemError("WATCHDOG_PID=\(owner): not a process id") }
            guard ownerPid == pid else { return nil }
        }
        return microseconds
    }

    /// The sockets systemd passed (`LISTEN_PID`, `LISTEN_FDS`, `LISTEN_FDNAMES`), each with its name (`unknown`
    /// when unnamed): none when `LISTEN_PID` or `LISTEN_FDS` is unset or the sockets are another process's. The
    /// descriptors (from `start`, systemd's 3) are made close-on-exec.
    /// - Throws: `SystemError` naming the variable when one is malformed, when the names and the count differ, or
    ///   naming the descriptor when one is not open.
    public static func listenFds(environment: (String) -> String? = Self.environment, pid: pid_t = getpid(),
                                 start: Int32 = listenFdsStart) throws -> [(fd: Int32, name: String)] {
        guard let pidText = environment("LISTEN_PID") else { return [] }
        guard let listenPid = pid_t(pidText), listenPid > 0 else { throw SystemError("LISTEN_PID=\(pidText): not a process id") }
        guard listenPid == pid, let countText = environment("LISTEN_FDS") else { return [] }
        guard let count = Int32(countText), count >= 0, count <= Int32.max - start else {
            throw SystemError("LISTEN_FDS=\(countText): not a count of descriptors")
        }
        var names = [String](repeating: "unknown", count: Int(count))
        if let namesText = environment("LISTEN_FDNAMES") {
            let given = namesText.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard given.count == Int(count) else {
                throw SystemError("LISTEN_FDNAMES=\(namesText): names \(given.count) sockets, LISTEN_FDS=\(count)")
            }
            names = given
        }
        return try names.enumerated().map { index, name in
            let fd = start + Int32(index)
            let flags = fcntl(fd, F_GETFD)
            guard flags >= 0, fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 else {
                throw SystemError("LISTEN_FDS=\(count): descriptor \(fd) (\(name))", errno: errno)
            }
            return (fd, name)
        }
    }

    /// The process environment.
    public static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
