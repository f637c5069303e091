import Foundation
#if canImport(Glibc)
import Glibc
#endif
import KioskTestSupport
import XCTest

/// The remote view over VeNCrypt with a client nobody here wrote: gvnccapture (gtk-vnc, through scripts/gvnc-capture)
/// checks kioskd's certificate against a CA made for the test (certtool, at run time), logs in with the password
/// inside TLS and sees what `screenshot` sees, pixel for pixel; without the CA it refuses the certificate; a plain
/// RFB client (vncdotool) is turned away by a TLS-only server. And the listener on IPv6: `[::]` (every address, IPv4
/// ones too) and `[::1]`; and bad certificate and key files as located errors.
final class VNCTLSTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private let password = "kiosk-42"

    /// A CA, and a server certificate it signed for 127.0.0.1, ::1 and localhost, in `dir`: ca.pem, server.pem,
    /// server.key; and `home/.pki/CA/cacert.pem`, the CA where gtk-vnc looks for it.
    static func makeCertificates(in dir: URL) throws {
        func certtool(_ arguments: [String]) throws {
            let result = try runTool("/usr/bin/certtool", arguments, timeout: 60)
            guard result.status == 0 else { throw ControlTestError("certtool \(arguments.joined(separator: " ")): \(result.text)") }
        }
        let path = { (name: String) in dir.appendingPathComponent(name).path }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/certtool") else {
            throw ControlTestError("certtool is missing: run scripts/setup-host (Debian package gnutls-bin)")
        }
        try "cn = kioskd test CA\nca\ncert_signing_key\nexpiration_days = 2\n".write(toFile: path("ca.tmpl"), atomically: true, encoding: .utf8)
        try "cn = 127.0.0.1\nip_address = 127.0.0.1\nip_address = ::1\ndns_name = localhost\ntls_www_server\nsigning_key\nexpiration_days = 2\n"
            .write(toFile: path("server.tmpl"), atomically: true, encoding: .utf8)
        try certtool(["--generate-privkey", "--key-type=ecdsa", "--outfile", path("ca.key")])
        try certtool(["--generate-self-signed", "--load-privkey", path("ca.key"), "--template", path("ca.tmpl"), "--outfile", path("ca.pem")])
        try certtool(["--generate-privkey", "--key-type=ecdsa", "--outfile", path("server.key")])
        try certtool(["--generate-certificate", "--load-privkey", path("server.key"), "--load-ca-certificate", path("ca.pem"),
                      "--load-ca-privkey", path("ca.key"), "--template", path("server.tmpl"), "--outfile", path("server.pem")])
        let pki = dir.appendingPathComponent("home/.pki/CA")
        try FileManager.default.createDirectory(at: pki, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path("ca.pem"), toPath: pki.appendingPathComponent("cacert.pem").path)
    }

    /// scripts/gvnc-capture: gvnccapture over VeNCrypt, trusting `home`'s CA ("-" for none).
    static func gvncCapture(port: Int, password: String, to out: URL, home: String) throws -> (status: Int32, text: String) {
        let result = try runTool("/usr/bin/python3", [repository.appendingPathComponent("scripts/gvnc-capture").path, "127.0.0.1", "\(port)",
                                                      password, out.path, home], timeout: 90)
        if result.status == 3 { XCTFail("gvnccapture is missing: run scripts/setup-host (\(result.text))") }
        return result
    }

    private func vncStats(_ daemon: ControlledKioskd) throws -> [String: Any] {
        try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first)
    }

    func testOverTLSARealClientSeesTheScreenshotAndRefusesAServerItCannotTrustAndAPlainClientIsTurnedAway() throws {
        let dir = try KioskdProcess.scratchDirectory("vnc-tls")
        try Self.makeCertificates(in: dir)
        try "\(password)\n".write(to: dir.appendingPathComponent("vnc.password"), atomically: true, encoding: .utf8)
        let port = try LoopbackPort.free()
        let config = dir.appendingPathComponent("kioskd.yaml")
        // Every address, IPv6 and IPv4: beyond loopback, which TLS allows.
        try """
            vnc:
              listen: "[::]:\(port)"
              password_file: vnc.password
              tls: {cert: server.pem, key: server.key}

            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60",
                                           "--scene", try VNCRemoteViewTests.staticScene(in: dir)])
        let shotPath = dir.appendingPathComponent("screenshot.png")
        try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(try daemon.result("screenshot")["png_base64"] as? String))).write(to: shotPath)

        let capturePath = dir.appendingPathComponent("tls.png")
        let captured = try Self.gvncCapture(port: port, password: password, to: capturePath, home: dir.appendingPathComponent("home").path)
        XCTAssertEqual(captured.status, 0, captured.text)
        XCTAssertTrue(captured.text.contains("Completed TLS setup, do subauth 261"), "X509Vnc: \(captured.text.suffix(3000))")
        let expected = try PNGFile(contentsOf: shotPath), seen = try PNGFile(contentsOf: capturePath)
        XCTAssertEqual(seen.width, 320)
        XCTAssertEqual(seen.height, 240)
        XCTAssertEqual(seen.differingPixels(from: expected), 0, "pixels that differ between the capture over TLS and the screenshot")
        XCTAssertEqual(seen.rgb(x: 60, y: 40), 0xE08020, "the card is there, so the picture is not trivially equal")
        var vnc = try vncStats(daemon)
        XCTAssertEqual(vnc["tls"] as? Bool, true, "\(vnc)")
        XCTAssertEqual(vnc["listen"] as? String, "[::]:\(port)", "\(vnc)")
        XCTAssertGreaterThan(vnc["bytes_sent"] as? Int ?? 0, 2000, "a whole frame went (ZRLE), encrypted: \(vnc)")

        // No CA to check the certificate against: the client refuses the server.
        let untrusted = dir.appendingPathComponent("untrusted.png")
        let refused = try Self.gvncCapture(port: port, password: password, to: untrusted, home: "-")
        XCTAssertNotEqual(refused.status, 0, refused.text)
        XCTAssertTrue(refused.text.contains("The certificate is not trusted"), String(refused.text.suffix(3000)))
        XCTAssertFalse(FileManager.default.fileExists(atPath: untrusted.path))

        // A plain RFB client: the server offers VeNCrypt only.
        let plainPath = dir.appendingPathComponent("plain.png")
        let plain = try runTool("/usr/bin/python3", [Self.repository.appendingPathComponent("scripts/vnc-client").path, "capture", "127.0.0.1",
                                                     "\(port)", password, plainPath.path], timeout: 60)
        XCTAssertNotEqual(plain.status, 0, plain.text)
        XCTAssertNotEqual(plain.status, 3, "vncdotool is missing: \(plain.text)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: plainPath.path))
        _ = try daemon.result("ping")
        vnc = try vncStats(daemon)
        XCTAssertEqual(vnc["authentication_failures"] as? Int, 0, "\(vnc)")
        XCTAssertEqual(vnc["updates_sent"] as? Int ?? 0 >= 1, true, "\(vnc)")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    /// Connects to `host` (an IPv4 or IPv6 address) and sends `bytes`; returns all kioskd sends until it closes
    /// the connection, or until `until` holds of what came.
    private func exchange(_ bytes: [UInt8], host: String, port: Int, until done: ([UInt8]) -> Bool = { _ in false }) throws -> [UInt8] {
        let six = host.contains(":")
        let fd = socket(six ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        func connectTo<Address>(_ address: inout Address) -> Int32 {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
            }
        }
        let connected: Int32
        if six {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET6, host, &address.sin6_addr)
            connected = connectTo(&address)
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &address.sin_addr)
            connected = connectTo(&address)
        }
        guard connected == 0 else { throw ControlTestError("connect \(host) port \(port): errno \(errno)") }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(received) {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return received }
            guard n > 0 else { throw ControlTestError("\(host) port \(port): no close (errno \(errno)) after \(received.count) bytes") }
            received += buffer[0..<n]
        }
        return received
    }

    func testAHostileTLSPeerIsClosedWithAReasonAndALoopbackIPv6ListenerServes() throws {
        let dir = try KioskdProcess.scratchDirectory("vnc-tls-hostile")
        try Self.makeCertificates(in: dir)
        let port = try LoopbackPort.free()
        let config = dir.appendingPathComponent("kioskd.yaml")
        try "vnc:\n  listen: \"127.0.0.1:\(port)\"\n  tls: {cert: server.pem, key: server.key}\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60"])
        let version = Array("RFB 003.008\n".utf8)
        // VeNCrypt 0.2, X509None chosen, then no TLS handshake but text: the offer, the ack, then the close.
        let garbage = try exchange(version + [19, 0, 2, 0, 0, 1, 4] + Array("GET / HTTP/1.1\r\nHost: kiosk\r\n\r\n".utf8), host: "127.0.0.1", port: port)
        XCTAssertEqual(Array(garbage.prefix(12 + 2 + 2 + 1 + 5 + 1)), version + [1, 19] + [0, 2] + [0] + [1, 0, 0, 1, 4] + [1], "\(garbage)")
        // A version other than 0.2, a subtype not offered: refused, closed.
        XCTAssertEqual(try exchange(version + [19, 0, 1], host: "127.0.0.1", port: port), version + [1, 19, 0, 2, 1])
        XCTAssertEqual(try exchange(version + [19, 0, 2, 0, 0, 1, 5], host: "127.0.0.1", port: port),
                       version + [1, 19, 0, 2, 0, 1, 0, 0, 1, 4, 0])
        // RFB 3.3 cannot speak VeNCrypt: told why.
        let old = try exchange(Array("RFB 003.003\n".utf8), host: "127.0.0.1", port: port)
        XCTAssertTrue(String(decoding: old.dropFirst(12 + 8), as: UTF8.self).hasPrefix("this server speaks VeNCrypt (TLS) only"), "\(old)")
        _ = try daemon.result("ping")
        XCTAssertEqual(try vncStats(daemon)["clients"] as? Int, 0)
        XCTAssertEqual(daemon.stop().status, 0)

        // IPv6 loopback, no TLS, no password: a client over ::1 gets the server's init (320x240).
        let port6 = try LoopbackPort.free()
        let config6 = dir.appendingPathComponent("kioskd6.yaml")
        try "vnc:\n  listen: \"[::1]:\(port6)\"\n".write(to: config6, atomically: true, encoding: .utf8)
        let daemon6 = try ControlledKioskd(["run", "--config", config6.path, "--backend", "headless", "--mode", "320x240@60"])
        let served = try exchange(version + [1, 1], host: "::1", port: port6) { $0.count >= 12 + 2 + 4 + 4 }
        XCTAssertEqual(Array(served.prefix(12 + 2 + 4 + 4)), version + [1, 1] + [0, 0, 0, 0] + [0x01, 0x40, 0x00, 0xF0], "\(served)")
        XCTAssertEqual(try vncStats(daemon6)["listen"] as? String, "[::1]:\(port6)")
        XCTAssertEqual(daemon6.stop().status, 0)
    }

    private func runOnce(_ yaml: String, in dir: URL) throws -> (status: Int32, stderr: String, config: String) {
        let config = dir.appendingPathComponent("kioskd.yaml")
        try yaml.write(to: config, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60", "--frames", "1"],
                                           timeout: 60)
        return (result.status, result.stderr, config.path)
    }

    func testBadCertificateAndKeyFilesAreLocatedErrorsNamingTheFile() throws {
        let dir = try KioskdProcess.scratchDirectory("vnc-tls-bad")
        try Self.makeCertificates(in: dir)
        let other = dir.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Self.makeCertificates(in: other)
        try "not a certificate\n".write(to: dir.appendingPathComponent("garbage.pem"), atomically: true, encoding: .utf8)
        let port = try LoopbackPort.free()
        let head = "vnc:\n  listen: \"127.0.0.1:\(port)\"\n  tls:\n"

        var run = try runOnce(head + "    cert: missing.pem\n    key: server.key\n", in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("\(run.config):4:11: vnc.tls.cert: \(dir.path)/missing.pem: cannot read it: ENOENT"), run.stderr)

        run = try runOnce(head + "    cert: garbage.pem\n    key: server.key\n", in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("\(run.config):4:11: vnc.tls.cert: \(dir.path)/garbage.pem: not a PEM X.509 certificate ("), run.stderr)

        run = try runOnce(head + "    cert: server.pem\n    key: garbage.pem\n", in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("\(run.config):5:10: vnc.tls.key: \(dir.path)/garbage.pem: not an unencrypted PEM private key ("), run.stderr)

        run = try runOnce(head + "    cert: server.pem\n    key: other/server.key\n", in: dir)
        XCTAssertEqual(run.status, 1, run.stderr)
        XCTAssertTrue(run.stderr.contains("\(run.config):5:10: vnc.tls.key: \(dir.path)/other/server.key: this key is not the certificate's ("), run.stderr)
    }
}
