import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking Unix-socket client of kioskd's control socket, written without kioskd's own modules (as any
/// script would): JSON through `JSONSerialization`. One thread each.
public final class ControlTestSocket {
    public let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var closedByPeer = false

    /// Connects to `path`. A connect that fails closes its socket here, once: the socket is this object's only once
    /// it connected, because a throwing initializer of a fully initialized object runs `deinit` too, and a second
    /// close would close whatever another thread opened under the same number meanwhile.
    public init(path: String, timeoutSeconds: Int = 20) throws {
        fd = try Self.connect(path)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func connect(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw ControlTestError("\(path): too long for sun_path")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw ControlTestError("connect \(path): errno \(code)")
        }
        return fd
    }

    deinit { close(fd) }

    /// Writes all of `bytes`; false when the server closed the connection or the write timed out.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// The next line (without its newline), or nil at end of stream, at the socket's timeout, or once `deadline`
    /// (when given) has passed.
    public func readLine(deadline: Date? = nil) -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return line
            }
            if let deadline {
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else { return nil }
                var events = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&events, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
                if ready < 0 && errno == EINTR { continue }
                if ready == 0 { continue }
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                // A reset counts as closed: the server closed with some of what we sent still unread.
                closedByPeer = n == 0 || errno == ECONNRESET
                return nil
            }
            buffer += chunk[0..<n]
        }
    }

    /// The next line as a JSON object (events included); nil at end of stream, timeout (the socket's, or
    /// `deadline` when given) or a line that is not one.
    public func readObject(deadline: Date? = nil) -> [String: Any]? {
        guard let line = readLine(deadline: deadline) else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
    }

    /// Sends one request and returns its reply, skipping events.
    public func request(_ json: String) -> [String: Any]? {
        guard write(Array((json + "\n").utf8)) else { return nil }
        while let object = readObject() {
            if object["event"] == nil { return object }
        }
        return nil
    }

    /// Reads until the server closes the connection (or the read times out); returns what arrived.
    public func readToEnd() -> String {
        var lines: [String] = []
        while let line = readLine() { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines.joined(separator: "\n")
    }
}

public struct ControlTestError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
