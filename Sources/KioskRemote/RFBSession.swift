import KioskCore

/// One client's side of the RFB protocol (RFC 6143), as a state machine without I/O: bytes in, what to send, what
/// the client asked for, and when to close and why. The handshake (version 3.3, 3.7 or 3.8; security None or VNC
/// authentication; or, with `tls`, only VeNCrypt (type 19) with the X509None or X509Vnc subtype, version 3.7 or 3.8),
/// then the client's messages: SetPixelFormat, SetEncodings, FramebufferUpdateRequest, KeyEvent
/// and PointerEvent, ClientCutText (skipped, bounded). Every malformed or oversized message closes with a reason.
/// What is buffered is bounded by the largest message kept (`maxEncodings`), whatever the peer sends.
///
/// Main thread (the server's); a test drives it directly.
public final class RFBSession {
    public enum Security: Sendable, Equatable {
        /// No authentication (loopback only; the configuration enforces it).
        case none
        /// VNC authentication with this password (its first 8 bytes count).
        case password([UInt8])
    }

    /// What the client asked for, once it is past the handshake.
    public enum Request: Equatable {
        case pixelFormat(RFBPixelFormat)
        case encodings([Int32])
        case update(incremental: Bool, area: Rect)
        case pointer(buttons: UInt8, x: Int, y: Int)
        case key(down: Bool, keysym: UInt32)
    }

    /// What to do with the socket after `receive`.
    public struct Reply: Equatable {
        public var send: [UInt8] = []
        public var requests: [Request] = []
        /// Set when the session is over: why (for the log); what the client was told, if anything, is in `send`.
        public var close: String?
        /// Set when VeNCrypt's TLS handshake starts: once `send` is on its way, everything on the connection is TLS.
        /// Holds the bytes that came after the client's choice of subtype (the start of its handshake, if it did not
        /// wait), which are TLS's too. `tlsEstablished()` continues the session once the handshake is done.
        public var startTLS: [UInt8]?
    }

    /// VeNCrypt's subtypes (security type 19) that this server offers: X.509 certificate TLS, then no authentication
    /// or VNC authentication inside it. The anonymous ones (TLSNone 257, TLSVnc 258) are not offered: a server that
    /// has a certificate would only let a man in the middle choose them.
    public static let vencryptType = 19
    public static let x509None = 260
    public static let x509Vnc = 261

    public static let maxEncodings = 64
    /// ClientCutText bodies are skipped up to this size; a longer one closes the session.
    public static let maxCutText = 1 << 20
    static let version38 = Array("RFB 003.008\n".utf8)

    private enum State {
        case version, securityType, vencryptVersion, vencryptSubtype, tlsHandshake, authResponse, clientInit, ready, closed
    }

    private let security: Security
    private let tls: Bool
    private let challenge: [UInt8]
    private let width: Int, height: Int
    private let name: String
    /// Set when the server turns this client away (too many clients): it is told so after the version exchange.
    private let refusal: String?
    private var state = State.version
    private var minor = 8
    private var pending: [UInt8] = []
    private var cutTextToSkip = 0
    public private(set) var isReady = false

    /// `challenge` is the 16 random bytes of VNC authentication (a test passes its own). With `tls`, only VeNCrypt
    /// is offered, and `security` is asked for inside TLS.
    public init(security: Security, tls: Bool = false, challenge: [UInt8], width: Int, height: Int, name: String, refusal: String? = nil) {
        precondition(challenge.count == 16, "a VNC challenge is 16 bytes")
        self.refusal = refusal
        self.security = security
        self.tls = tls
        self.challenge = challenge
        self.width = width
        self.height = height
        self.name = name
    }

    /// What the server sends first.
    public var greeting: [UInt8] { Self.version38 }

    /// Takes `bytes` from the client, in any chunking.
    public func receive(_ bytes: some Collection<UInt8>) -> Reply {
        var reply = Reply()
        guard state != .closed else { return reply }
        var input = ArraySlice(bytes)
        if cutTextToSkip > 0 {
            let skipped = min(cutTextToSkip, input.count)
            cutTextToSkip -= skipped
            input = input.dropFirst(skipped)
        }
        pending.append(contentsOf: input)
        var offset = 0
        while state != .closed {
            let used = step(pending[offset...], &reply)
            if state == .tlsHandshake {
                // From here on the connection is TLS: what is left is the start of the client's handshake.
                reply.startTLS = Array(pending[(offset + used)...])
                pending = []
                return reply
            }
            if used == 0 { break }
            offset += used
            if cutTextToSkip > 0 {
                let skipped = min(cutTextToSkip, pending.count - offset)
                cutTextToSkip -= skipped
                offset += skipped
            }
        }
        pending.removeFirst(min(offset, pending.count))
        return reply
    }

    private func close(_ reply: inout Reply, _ reason: String, tell: Bool) {
        // 3.8 carries a reason with a failed security result; earlier versions only see the connection close.
        if tell, minor >= 8 { reply.send += Self.u32(1) + Self.string(reason) }
        reply.close = reason
        state = .closed
        pending = []
    }

    /// Handles one complete unit at the start of `input`; returns the bytes used, 0 when more are needed.
    private func step(_ input: ArraySlice<UInt8>, _ reply: inout Reply) -> Int {
        let b = input, i = input.startIndex
        func u16(_ at: Int) -> Int { Int(b[i + at]) << 8 | Int(b[i + at + 1]) }
        func u32(_ at: Int) -> Int { Int(b[i + at]) << 24 | Int(b[i + at + 1]) << 16 | Int(b[i + at + 2]) << 8 | Int(b[i + at + 3]) }
        switch state {
        case .version:
            guard Self.version38.starts(with: b.prefix(4)) else {
                close(&reply, "not an RFB client: it sent \(Self.printable(b.prefix(12)))", tell: false)
                return 0
            }
            guard b.count >= 12 else { return 0 }
            let text = Array(b.prefix(12))
            guard text[7] == UInt8(ascii: "."), text[11] == UInt8(ascii: "\n"),
                  let major = Int(String(decoding: text[4..<7], as: UTF8.self)),
                  let minor = Int(String(decoding: text[8..<11], as: UTF8.self)), major == 3 else {
                close(&reply, "not an RFB 3.x version: \(Self.printable(text[...]))", tell: false)
                return 0
            }
            // RFC 6143 §7.1.1: 3.4 to 3.6 are 3.3; anything past 3.8 speaks 3.8.
            self.minor = minor >= 8 ? 8 : (minor == 7 ? 7 : 3)
            var refusal = refusal
            if refusal == nil, tls, self.minor == 3 {
                refusal = "this server speaks VeNCrypt (TLS) only, which needs RFB 3.7 or later (the client speaks 3.\(minor))"
            }
            if let refusal {
                // No security types (or type 0 in 3.3), then the reason (RFC 6143 §7.1.2).
                reply.send += (self.minor == 3 ? Self.u32(0) : [0]) + Self.string(refusal)
                reply.close = refusal
                state = .closed
                pending = []
                return 0
            }
            if self.minor == 3 {
                reply.send += Self.u32(securityType)
                if case .password = security { reply.send += challenge; state = .authResponse } else { state = .clientInit }
            } else {
                reply.send += [1, UInt8(securityType)]
                state = .securityType
            }
            return 12
        case .securityType:
            guard let chosen = b.first else { return 0 }
            guard Int(chosen) == securityType else {
                close(&reply, "security type \(chosen) was not offered (offered \(securityType))", tell: true)
                return 0
            }
            if tls {
                reply.send += [0, 2]
                state = .vencryptVersion
                return 1
            }
            if case .password = security {
                reply.send += challenge
                state = .authResponse
            } else {
                if minor >= 8 { reply.send += Self.u32(0) }
                state = .clientInit
            }
            return 1
        case .vencryptVersion:
            guard b.count >= 2 else { return 0 }
            guard b[i] == 0, b[i + 1] == 2 else {
                reply.send += [1]
                close(&reply, "VeNCrypt version \(b[i]).\(b[i + 1]) asked for (only 0.2 is spoken)", tell: false)
                return 0
            }
            reply.send += [0, 1] + Self.u32(vencryptSubtype)
            state = .vencryptSubtype
            return 2
        case .vencryptSubtype:
            guard b.count >= 4 else { return 0 }
            guard u32(0) == vencryptSubtype else {
                reply.send += [0]
                close(&reply, "VeNCrypt subtype \(u32(0)) was not offered (offered \(vencryptSubtype))", tell: false)
                return 0
            }
            reply.send += [1]
            state = .tlsHandshake
            return 4
        case .tlsHandshake:
            return 0
        case .authResponse:
            guard b.count >= 16, case .password(let password) = security else { return 0 }
            let expected = DES.vncResponse(challenge: challenge, password: password)
            guard Self.constantTimeEqual(Array(b.prefix(16)), expected) else {
                close(&reply, "authentication failed: wrong password", tell: true)
                if minor < 8 { reply.send += Self.u32(1) }
                return 0
            }
            reply.send += Self.u32(0)
            state = .clientInit
            return 16
        case .clientInit:
            guard !b.isEmpty else { return 0 }
            reply.send += Self.u16(width) + Self.u16(height) + RFBPixelFormat.xrgb8888.bytes + Self.string(name)
            state = .ready
            isReady = true
            return 1
        case .ready:
            guard let type = b.first else { return 0 }
            switch type {
            case 0:
                guard b.count >= 20 else { return 0 }
                let format = RFBPixelFormat(bytes: b[(i + 4)..<(i + 20)])
                if let reason = format.unsupportedReason {
                    close(&reply, "SetPixelFormat: \(reason)", tell: false)
                    return 0
                }
                reply.requests.append(.pixelFormat(format))
                return 20
            case 2:
                guard b.count >= 4 else { return 0 }
                let count = u16(2)
                guard count <= Self.maxEncodings else {
                    close(&reply, "SetEncodings: \(count) encodings (at most \(Self.maxEncodings))", tell: false)
                    return 0
                }
                guard b.count >= 4 + 4 * count else { return 0 }
                reply.requests.append(.encodings((0..<count).map { Int32(truncatingIfNeeded: u32(4 + 4 * $0)) }))
                return 4 + 4 * count
            case 3:
                guard b.count >= 10 else { return 0 }
                let area = Rect(x: u16(2), y: u16(4), width: u16(6), height: u16(8))
                reply.requests.append(.update(incremental: b[i + 1] != 0, area: area))
                return 10
            case 4:
                guard b.count >= 8 else { return 0 }
                reply.requests.append(.key(down: b[i + 1] != 0, keysym: UInt32(u32(4))))
                return 8
            case 5:
                guard b.count >= 6 else { return 0 }
                reply.requests.append(.pointer(buttons: b[i + 1], x: u16(2), y: u16(4)))
                return 6
            case 6:
                guard b.count >= 8 else { return 0 }
                let length = u32(4)
                guard length <= Self.maxCutText else {
                    close(&reply, "ClientCutText of \(length) bytes (at most \(Self.maxCutText))", tell: false)
                    return 0
                }
                cutTextToSkip = length
                return 8
            default:
                close(&reply, "unknown client message type \(type)", tell: false)
                return 0
            }
        case .closed:
            return 0
        }
    }

    private var securityType: Int {
        if tls { return Self.vencryptType }
        if case .password = security { return 2 } else { return 1 }
    }

    private var vencryptSubtype: Int {
        if case .password = security { Self.x509Vnc } else { Self.x509None }
    }

    /// VeNCrypt's TLS handshake is done: what the server says first inside it (VNC authentication's challenge, or
    /// the security result of X509None). Every later byte in either direction goes through TLS.
    public func tlsEstablished() -> Reply {
        var reply = Reply()
        guard state == .tlsHandshake else { return reply }
        if case .password = security {
            reply.send += challenge
            state = .authResponse
        } else {
            reply.send += Self.u32(0)
            state = .clientInit
        }
        return reply
    }

    static func u16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    static func u32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
    static func string(_ s: String) -> [UInt8] { let b = Array(s.utf8); return u32(b.count) + b }

    static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        "\"" + bytes.map { (32..<127).contains($0) ? String(UnicodeScalar($0)) : "\\x" + String($0, radix: 16) }.joined() + "\""
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
