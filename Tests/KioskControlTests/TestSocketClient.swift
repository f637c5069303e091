import Foundation
import Glibc
import KioskControl
import KioskCore

/// A non-blocking client for tests that drive the server's loop on the same thread: sends are small enough
/// for the socket buffer, and replies are collected while the test turns the loop. Test thread only.
final class TestSocketClient {
    let fd: Int32
    private var framer = LineFramer(maxLineBytes: 16 << 20)
    private(set) var lines: [JSONValue] = []
    private(set) var closedByPeer = false

    init(path: String) throws {
        // Held in a local until connected: a throw after `fd` is set would run `deinit`, closing the number twice.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let result: Int32
        do { result = try UnixSocketAddress(path: path).connect(fd) } catch {
            close(fd)
            throw error
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw SystemError("test client connect \(path)", errno: code)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    deinit { close(fd) }

    /// Writes what the socket takes now; the tests send less than a socket buffer holds, except the over-long
    /// line, whose tail the server never needs.
    func send(_ text: String) {
        send(bytes: Array(text.utf8))
    }

    func send(bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// Collects whatever arrived.
    func poll() {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                for piece in framer.append(chunk[0..<n]) {
                    if case .line(let bytes) = piece {
                        lines.append((try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))) ?? .string("unparsable"))
                    }
                }
                continue
            }
            if n == 0 || (errno != EAGAIN && errno != EINTR) { closedByPeer = true }
            return
        }
    }

    func takeLines() -> [JSONValue] {
        defer { lines = [] }
        return lines
    }
}

/// A short socket directory: sun_path holds 108 bytes, and build folders can be deep.
func makeSocketDirectory() throws -> String {
    var template = Array("/tmp/kctl-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", errno: errno) }
    return String(cString: made)
}
