import KioskCore
@testable import KioskRemote
import KioskTestSupport
import XCTest

/// The RFB state machine without sockets: the handshakes a real client goes through, and hostile bytes at every
/// step, each closed with a reason and nothing buffered past the bound.
final class RFBSessionTests: XCTestCase {
    private let challenge = Array(UInt8(0)..<16)
    private let password = Array("kiosk".utf8)

    private func session(_ security: RFBSession.Security = .none, refusal: String? = nil) -> RFBSession {
        RFBSession(security: security, challenge: challenge, width: 800, height: 480, name: "HDMI-A-1", refusal: refusal)
    }

    /// A 3.8 session through VNC authentication and ClientInit; returns it ready.
    private func loggedIn() -> RFBSession {
        let s = session(.password(password))
        XCTAssertEqual(s.receive(Array("RFB 003.008\n".utf8)).send, [1, 2])
        XCTAssertEqual(s.receive([2]).send, challenge)
        XCTAssertEqual(s.receive(DES.vncResponse(challenge: challenge, password: password)).send, [0, 0, 0, 0])
        let initMessage = s.receive([1]).send
        XCTAssertEqual(Array(initMessage.prefix(4)), [0x03, 0x20, 0x01, 0xE0])
        XCTAssertEqual(Array(initMessage[4..<20]), RFBPixelFormat.xrgb8888.bytes)
        XCTAssertEqual(Array(initMessage[24...]), Array("HDMI-A-1".utf8))
        XCTAssertTrue(s.isReady)
        return s
    }

    func testPasswordHandshakeThenRequestsInAnyChunking() {
        let s = loggedIn()
        var bytes: [UInt8] = [3, 1, 0, 0, 0, 0, 0x03, 0x20, 0x01, 0xE0]
        bytes += [5, 1, 0, 10, 0, 20] as [UInt8]
        bytes += [2, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 16] as [UInt8]
        bytes += [4, 1, 0, 0, 0, 0, 0xFF, 0x0D] as [UInt8]
        bytes += [6, 0, 0, 0, 0, 0, 0, 3] as [UInt8]
        bytes += Array("abc".utf8)
        var requests: [RFBSession.Request] = []
        for byte in bytes {
            let reply = s.receive([byte])
            XCTAssertNil(reply.close)
            requests += reply.requests
        }
        XCTAssertEqual(requests, [.update(incremental: true, area: Rect(x: 0, y: 0, width: 800, height: 480)),
                                  .pointer(buttons: 1, x: 10, y: 20), .encodings([0, 16]), .key(down: true, keysym: 0xFF0D)])
        // The cut text was skipped: the next message parses.
        XCTAssertEqual(s.receive([5, 0, 0, 1, 0, 2]).requests, [.pointer(buttons: 0, x: 1, y: 2)])
    }

    func testAWrongPasswordIsRefusedWithAReason() {
        let s = session(.password(password))
        _ = s.receive(Array("RFB 003.008\n".utf8))
        _ = s.receive([2])
        let reply = s.receive(DES.vncResponse(challenge: challenge, password: Array("wrong".utf8)))
        XCTAssertEqual(Array(reply.send.prefix(4)), [0, 0, 0, 1])
        XCTAssertTrue(String(decoding: reply.send.dropFirst(8), as: UTF8.self).contains("authentication failed"))
        XCTAssertEqual(reply.close, "authentication failed: wrong password")
        XCTAssertEqual(s.receive([1]).send, [], "a closed session answers nothing")
    }

    func testOlderClientsAreServed() {
        let s33 = session(.password(password))
        XCTAssertEqual(s33.receive(Array("RFB 003.003\n".utf8)).send, [0, 0, 0, 2] + challenge)
        let s37 = session()
        XCTAssertEqual(s37.receive(Array("RFB 003.007\n".utf8)).send, [1, 1])
        XCTAssertEqual(s37.receive([1]).send, [], "3.7 sends no security result for None")
        XCTAssertEqual(s37.receive([0]).send.count, 24 + 8)
    }

    func testGarbageBeforeTheHandshakeIsClosedWithAReason() {
        XCTAssertEqual(session().receive(Array("GET / HTTP/1.1\r\n".utf8)).close?.hasPrefix("not an RFB client"), true)
        XCTAssertEqual(session().receive(Array("RFB 004.001\n".utf8)).close?.hasPrefix("not an RFB 3.x version"), true)
        XCTAssertEqual(session().receive([0xFF, 0, 0]).close?.hasPrefix("not an RFB client"), true)
    }

    func testASecurityTypeNotOfferedIsRefused() {
        let s = session(.password(password))
        _ = s.receive(Array("RFB 003.008\n".utf8))
        let reply = s.receive([1])
        XCTAssertEqual(reply.close, "security type 1 was not offered (offered 2)")
        XCTAssertEqual(Array(reply.send.prefix(4)), [0, 0, 0, 1])
    }

    func testAClientOverTheLimitIsToldWhy() {
        let reply = session(refusal: "too many VNC clients (at most 4)").receive(Array("RFB 003.008\n".utf8))
        XCTAssertEqual(reply.send, [0] + RFBSession.string("too many VNC clients (at most 4)"))
        XCTAssertEqual(reply.close, "too many VNC clients (at most 4)")
    }

    func testHostileMessagesAfterLoginCloseWithAReason() {
        XCTAssertEqual(loggedIn().receive([9]).close, "unknown client message type 9")
        XCTAssertEqual(loggedIn().receive([2, 0, 0xFF, 0xFF]).close, "SetEncodings: 65535 encodings (at most 64)")
        XCTAssertEqual(loggedIn().receive([6, 0, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF]).close, "ClientCutText of 2147483647 bytes (at most 1048576)")
        let eightBit = RFBPixelFormat(bitsPerPixel: 8, depth: 8, bigEndian: false, trueColour: true, redMax: 7, greenMax: 7, blueMax: 3,
                                      redShift: 0, greenShift: 3, blueShift: 6)
        XCTAssertEqual(loggedIn().receive([0, 0, 0, 0] + eightBit.bytes).close, "SetPixelFormat: 8 bits per pixel (only 32-bit true colour is served)")
        var map = RFBPixelFormat.xrgb8888
        map.trueColour = false
        XCTAssertEqual(loggedIn().receive([0, 0, 0, 0] + map.bytes).close?.hasPrefix("SetPixelFormat: a colour map"), true)
    }

    func testRandomBytesNeverCrashAndNeverBufferPastTheBound() {
        var generator = SplitMix(seed: 42)
        for _ in 0..<200 {
            let s = loggedIn()
            for _ in 0..<20 {
                let chunk = (0..<Int.random(in: 1...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                if s.receive(chunk).close != nil { break }
            }
        }
        // A half message of the largest kept kind waits; a megabyte of cut text is skipped as it streams, not kept.
        let s = loggedIn()
        XCTAssertNil(s.receive([6, 0, 0, 0, 0, 0x10, 0, 0]).close)
        for _ in 0..<16 { XCTAssertNil(s.receive([UInt8](repeating: 0x41, count: 65536)).close) }
        XCTAssertEqual(s.receive([5, 1, 0, 3, 0, 4]).requests, [.pointer(buttons: 1, x: 3, y: 4)])
    }

    /// VeNCrypt: type 19 only, version 0.2, the one X.509 subtype, the ack, then TLS: the bytes the client sent
    /// after its choice are handed to TLS, and once the handshake is done the session goes on inside it.
    func testVeNCryptNegotiatesTheX509SubtypeAndHandsTheRestToTLS() {
        let s = RFBSession(security: .password(password), tls: true, challenge: challenge, width: 800, height: 480, name: "HDMI-A-1")
        XCTAssertEqual(s.receive(Array("RFB 003.008\n".utf8)).send, [1, 19])
        XCTAssertEqual(s.receive([19]).send, [0, 2], "VeNCrypt 0.2")
        XCTAssertEqual(s.receive([0, 2]).send, [0, 1, 0, 0, 1, 5], "accepted; one subtype, X509Vnc")
        let started = s.receive([0, 0, 1, 5, 0x16, 0x03, 0x01])
        XCTAssertEqual(started.send, [1], "the ack")
        XCTAssertEqual(started.startTLS, [0x16, 0x03, 0x01], "the start of the ClientHello is TLS's")
        XCTAssertNil(started.close)
        XCTAssertEqual(s.tlsEstablished().send, challenge, "VNC authentication inside TLS")
        XCTAssertEqual(s.receive(DES.vncResponse(challenge: challenge, password: password)).send, [0, 0, 0, 0])
        XCTAssertEqual(Array(s.receive([1]).send.prefix(4)), [0x03, 0x20, 0x01, 0xE0])
        XCTAssertTrue(s.isReady)

        // Without a password, X509None: the security result comes first inside TLS.
        let none = RFBSession(security: .none, tls: true, challenge: challenge, width: 800, height: 480, name: "HDMI-A-1")
        _ = none.receive(Array("RFB 003.008\n".utf8) + [19, 0, 2])
        XCTAssertEqual(none.receive([0, 0, 1, 4]).startTLS, [])
        XCTAssertEqual(none.tlsEstablished().send, [0, 0, 0, 0])
    }

    func testVeNCryptRefusesWhatItDidNotOffer() {
        func tlsSession() -> RFBSession {
            RFBSession(security: .none, tls: true, challenge: challenge, width: 800, height: 480, name: "HDMI-A-1")
        }
        var s = tlsSession()
        _ = s.receive(Array("RFB 003.008\n".utf8))
        XCTAssertEqual(s.receive([2]).close, "security type 2 was not offered (offered 19)", "plain VNC authentication")
        s = tlsSession()
        _ = s.receive(Array("RFB 003.008\n".utf8) + [19])
        let version = s.receive([0, 1])
        XCTAssertEqual(version.send, [1])
        XCTAssertEqual(version.close, "VeNCrypt version 0.1 asked for (only 0.2 is spoken)")
        s = tlsSession()
        _ = s.receive(Array("RFB 003.008\n".utf8) + [19, 0, 2])
        let subtype = s.receive([0, 0, 1, 1])
        XCTAssertEqual(subtype.send, [0])
        XCTAssertEqual(subtype.close, "VeNCrypt subtype 257 was not offered (offered 260)", "anonymous TLS is not offered")
        XCTAssertNil(subtype.startTLS)
        s = tlsSession()
        let old = s.receive(Array("RFB 003.003\n".utf8))
        XCTAssertEqual(Array(old.send.prefix(4)), [0, 0, 0, 0])
        XCTAssertEqual(old.close?.hasPrefix("this server speaks VeNCrypt (TLS) only, which needs RFB 3.7 or later"), true, old.close ?? "")
    }
}
