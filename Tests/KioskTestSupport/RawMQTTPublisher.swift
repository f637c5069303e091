import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An MQTT 3.1.1 client that only publishes, at QoS 0, over one TCP connection to a broker on loopback: thousands
/// of payloads of any bytes (newlines, NULs) without a process each, which `mosquitto_pub -l` cannot carry. Used by
/// one test thread.
public final class RawMQTTPublisher {
    private let fd: Int32

    public init(port: Int, clientID: String = "raw-\(getpid())") throws {
        // Held in a local until the broker accepted: a throw after `fd` is set would run `deinit`, closing the number
        // twice.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw ControlTestError("connect to 127.0.0.1:\(port): errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // CONNECT: protocol name, level 4 (3.1.1), clean session, keepalive 60 s, client id.
        var body = Self.string("MQTT") + [4, 0x02, 0, 60] + Self.string(clientID)
        do { try Self.send(fd, packet: 0x10, &body) } catch {
            close(fd)
            throw error
        }
        var connack = [UInt8](repeating: 0, count: 4)
        guard recv(fd, &connack, 4, Int32(MSG_WAITALL)) == 4, connack[0] == 0x20, connack[3] == 0 else {
            close(fd)
            throw ControlTestError("the broker refused the connection: \(connack)")
        }
        self.fd = fd
    }

    deinit {
        var disconnect: [UInt8] = [0xE0, 0]
        _ = Glibc.send(fd, &disconnect, 2, Int32(MSG_NOSIGNAL))
        close(fd)
    }

    /// Publishes `payload` on `topic` at QoS 0.
    public func publish(_ topic: String, _ payload: [UInt8]) throws {
        var body = Self.string(topic) + payload
        try send(packet: 0x30, &body)
    }

    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
    }

    private func send(packet type: UInt8, _ body: inout [UInt8]) throws {
        try Self.send(fd, packet: type, &body)
    }

    private static func send(_ fd: Int32, packet type: UInt8, _ body: inout [UInt8]) throws {
        var header: [UInt8] = [type]
        var length = body.count
        repeat {
            var byte = UInt8(length % 128)
            length /= 128
            if length > 0 { byte |= 0x80 }
            header.append(byte)
        } while length > 0
        var packet = header + body
        var sent = 0
        while sent < packet.count {
            let n = packet.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ControlTestError("send to the broker: errno \(errno)") }
            sent += n
        }
    }
}
