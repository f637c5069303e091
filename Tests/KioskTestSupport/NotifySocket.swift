import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for systemd's notify socket: a Unix datagram socket under /tmp that a child gets as
/// `NOTIFY_SOCKET`, and the messages it sent (`READY=1\nSTATUS=...`), read with a deadline. Test thread only.
public final class NotifySocket {
    public let path: String
    private let fd: Int32
    /// Every message received so far, in order.
    public private(set) var messages: [String] = []
    private var examined = 0

    public init() throws {
        let path = "/tmp/kioskd-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        self.path = path
        // Held in a local until bound: a throw after `fd` is set would run `deinit`, closing the number twice.
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("notify socket: socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { close(fd); throw ControlTestError("notify socket \(path): bind: errno \(errno)") }
        self.fd = fd
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Takes every message already queued, without waiting: for a sender that has exited.
    public func drain() -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { break }
            messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
        return messages
    }

    /// Waits up to `timeout` seconds for a message not yet returned by an earlier wait that satisfies
    /// `predicate`; messages passed over on the way stay in `messages`.
    public func waitFor(_ what: String, timeout: Double = 30, _ predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            while examined < messages.count {
                let message = messages[examined]
                examined += 1
                if predicate(message) { return message }
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw ControlTestError("no notify message \(what) within \(timeout) s; got \(messages)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000) + 1) >= 0 || errno == EINTR else {
                throw ControlTestError("notify socket: poll: errno \(errno)")
            }
            guard poller.revents & Int16(POLLIN) != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            if count > 0 { messages.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
        }
    }
}
