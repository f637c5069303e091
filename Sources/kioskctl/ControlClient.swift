import Foundation
import Glibc
import KioskControl

/// Why kioskctl stops, with its documented exit status.
struct ClientFailure: Error, CustomStringConvertible {
    var message: String
    var status: Int32
    var description: String { message }

    static let errorReplyStatus: Int32 = 1
    static let usageStatus: Int32 = 2
    static let cannotConnectStatus: Int32 = 3
}

/// A blocking connection to kioskd's control socket: kioskctl is a short-lived command, so it simply waits.
/// Lives on kioskctl's main thread.
final class ControlClient {
    private let fd: Int32
    private let path: String
    private var framer = LineFramer(maxLineBytes: 64 << 20)
    private var pending: [[UInt8]] = []

    init(path: String) throws {
        self.path = path
        // Held in a local until connected: a throwing initializer of a fully initialized object runs `deinit` too,
        // which would close the number a second time.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw ClientFailure(message: "socket: \(String(cString: strerror(errno)))", status: ClientFailure.cannotConnectStatus)
        }
        let address: UnixSocketAddress
        do { address = try UnixSocketAddress(path: path) } catch {
            close(fd)
            throw ClientFailure(message: "\(error)", status: ClientFailure.cannotConnectStatus)
        }
        let result = address.connect(fd)
        guard result == 0 else {
            let code = errno
            close(fd)
            throw ClientFailure(message: "cannot connect to \(path): \(String(cString: strerror(code))) (is kioskd running? --socket / KIOSKD_SOCKET)",
                                status: ClientFailure.cannotConnectStatus)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    func sendLine(_ data: Data) throws {
        var bytes = [UInt8](data)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ClientFailure(message: "control socket \(path): send: \(String(cString: strerror(errno)))", status: ClientFailure.cannotConnectStatus)
            }
            offset += n
        }
    }

    /// The next line from the server; nil when it closed the connection.
    func readLine() throws -> [UInt8]? {
        while pending.isEmpty {
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && errno == ECONNRESET { return nil }
            if n < 0 {
                throw ClientFailure(message: "control socket \(path): recv: \(String(cString: strerror(errno)))", status: ClientFailure.cannotConnectStatus)
            }
            if n == 0 { return nil }
            for piece in framer.append(chunk[0..<n]) {
                if case .line(let line) = piece { pending.append(line) }
            }
        }
        return pending.removeFirst()
    }

    /// Reads until the reply (a line without "event"); events that arrive first go to `onEvent`.
    func readReply(onEvent: (([UInt8], JSONValue) -> Void)? = nil) throws -> ([UInt8], JSONValue) {
        while let line = try readLine() {
            let value = (try? JSONDecoder().decode(JSONValue.self, from: Data(line))) ?? .null
            if value["event"] != nil {
                onEvent?(line, value)
                continue
            }
            return (line, value)
        }
        throw ClientFailure(message: "control socket \(path): kioskd closed the connection without a reply", status: ClientFailure.cannotConnectStatus)
    }
}
