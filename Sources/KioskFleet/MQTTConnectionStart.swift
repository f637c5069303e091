#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import KioskCore

/// The libmosquitto client handle, destroyed with its last reference. The loop thread uses it, except while a
/// connection is being started: then a worker holds it for one `mosquitto_connect_async` call, and the loop
/// leaves it alone until the worker's outcome is back through the loop's waker (`MQTTConnection.attempt`). That
/// hand-over, with the queue and the waker ordering the two threads' uses, is why it may cross threads.
final class MosquittoHandle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        mosquitto_destroy(pointer)
    }
}

/// How starting a connection on the worker went. An immutable value; crosses from the worker to the loop.
enum ConnectStart: Sendable {
    /// The host name did not resolve; no connection was tried.
    case unresolved(SystemError)
    /// `mosquitto_connect_async` to `address` returned `code` (and left `errno`).
    case started(address: String, code: Int32, errno: Int32)
}

extension MQTTConnection {
    /// getaddrinfo for a TCP connection to `host`, the first address as text (IPv4 or IPv6). Blocks as long as
    /// DNS takes: call it on a worker. Any thread.
    public static let systemResolver: Resolver = { host, port in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard rc == 0, let first = list else {
            let reason = rc == EAI_SYSTEM ? errnoDescription(errno) : String(cString: gai_strerror(rc))
            return .failure(SystemError("MQTT broker \(host):\(port): cannot resolve the host name: \(reason)"))
        }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(first.pointee.ai_addr, first.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return .failure(SystemError("MQTT broker \(host):\(port): getnameinfo on its address failed"))
        }
        return .success(String(cString: text))
    }
}
