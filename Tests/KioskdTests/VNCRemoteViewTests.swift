import Foundation
#if canImport(Glibc)
import Glibc
#endif
import KioskTestSupport
import XCTest

/// The remote view with a VNC client nobody here wrote (vncdotool 1.4.2 from PyPI, through scripts/vnc-client): it
/// logs in with the password and sees what `screenshot` sees, pixel for pixel; a wrong password is refused; with
/// `input: true` its click presses the HMI scene's button, with `input: false` it does not; 20 clients that never
/// read cost the loop a small, bounded share of each frame, and the loop keeps answering.
final class VNCRemoteViewTests: XCTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let client = repository.appendingPathComponent("scripts/vnc-client").path
    private let password = "kiosk-42"

    /// kioskd headless at 320x240 with `vnc:` on a free loopback port, showing `scene`.
    /// Without `withPassword`, no authentication (allowed on loopback).
    private func start(_ name: String, scene: String, vnc extra: String, maxClients: Int = 4,
                       withPassword: Bool = true) throws -> (ControlledKioskd, Int, URL) {
        let dir = try KioskdProcess.scratchDirectory(name)
        try "\(password)\n".write(to: dir.appendingPathComponent("vnc.password"), atomically: true, encoding: .utf8)
        let port = try LoopbackPort.free()
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            vnc:
              listen: "127.0.0.1:\(port)"
            \(withPassword ? "  password_file: vnc.password" : "")
              max_clients: \(maxClients)
            \(extra)
            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60",
                                           "--scene", scene])
        return (daemon, port, dir)
    }

    private func vncClient(_ arguments: [String]) throws -> (status: Int32, text: String) {
        let result = try runTool("/usr/bin/python3", [Self.client] + arguments, timeout: 60)
        if result.status == 3 { XCTFail("vncdotool is missing: run scripts/setup-host (\(result.text))") }
        return result
    }

    /// A scene that never changes: a capture and a screenshot taken at different times are of the same picture.
    static func staticScene(in dir: URL) throws -> String {
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            size: display
            background: "#203040"
            widgets:
              - {id: card, type: panel, x: 12, y: 14, width: 150, height: 60, background: "#e08020", corner_radius: 9}
              - {id: label, type: text, text: "Remote view", x: 20, y: 100, foreground: "#f0f0f0", font: {size: 28}}
              - {id: bar, type: progress, value: 0.6, x: 20, y: 180, width: 280, height: 24, foreground: "#40c040", background: "#444"}

            """.write(to: scene, atomically: true, encoding: .utf8)
        return scene.path
    }

    func testAClientLogsInAndSeesTheScreenshotPixelForPixelAndAWrongPasswordIsRefused() throws {
        let dir = try KioskdProcess.scratchDirectory("vnc-capture-scene")
        let (daemon, port, scratch) = try start("vnc-capture", scene: try Self.staticScene(in: dir), vnc: "")
        let shotPath = scratch.appendingPathComponent("screenshot.png")
        let shot = try daemon.result("screenshot")
        try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(shot["png_base64"] as? String))).write(to: shotPath)
        let capturePath = scratch.appendingPathComponent("vnc.png")
        let captured = try vncClient(["capture", "127.0.0.1", "\(port)", password, capturePath.path])
        XCTAssertEqual(captured.status, 0, captured.text)
        let expected = try PNGFile(contentsOf: shotPath), seen = try PNGFile(contentsOf: capturePath)
        XCTAssertEqual(seen.width, 320)
        XCTAssertEqual(seen.height, 240)
        XCTAssertEqual(seen.differingPixels(from: expected), 0, "pixels that differ between the VNC capture and the screenshot")
        XCTAssertEqual(seen.rgb(x: 60, y: 40), 0xE08020, "the card is there, so the picture is not trivially equal")

        // The same with ZRLE, the compressed encoding: tiles solid, in runs or raw, through zlib.
        let sentRaw = try XCTUnwrap(vnc(try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first), "bytes_sent"))
        XCTAssertGreaterThan(sentRaw, 320 * 240 * 4, "a whole frame in Raw")
        let zrlePath = scratch.appendingPathComponent("vnc-zrle.png")
        let zrle = try vncClient(["capture-zrle", "127.0.0.1", "\(port)", password, zrlePath.path])
        XCTAssertEqual(zrle.status, 0, zrle.text)
        let seenZRLE = try PNGFile(contentsOf: zrlePath)
        XCTAssertEqual(seenZRLE.differingPixels(from: expected), 0, "pixels that differ between the ZRLE capture and the screenshot")
        let sentZRLE = try XCTUnwrap(vnc(try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first), "bytes_sent")) - sentRaw
        XCTAssertLessThan(sentZRLE, 320 * 240 * 4 / 10, "the same frame in ZRLE, a tenth of Raw at most")

        let refused = try vncClient(["capture", "127.0.0.1", "\(port)", "wrong", scratch.appendingPathComponent("no.png").path])
        XCTAssertEqual(refused.status, 2, refused.text)
        XCTAssertFalse(FileManager.default.fileExists(atPath: scratch.appendingPathComponent("no.png").path))
        let vnc = try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first)
        XCTAssertEqual(vnc["authentication_failures"] as? Int, 1, "\(vnc)")
        XCTAssertEqual(vnc["clients_accepted"] as? Int, 3, "\(vnc)")
        XCTAssertGreaterThan(vnc["updates_sent"] as? Int ?? 0, 1, "\(vnc)")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    private func vnc(_ stats: [String: Any], _ key: String) -> Int? { stats[key] as? Int }

    /// The centre of a widget of the HMI scene on screen: its frame plus its ancestors'.
    private func centre(of id: String, ancestors: [String], in daemon: ControlledKioskd) throws -> (Int, Int) {
        var x = 0.0, y = 0.0, width = 0.0, height = 0.0
        for widget in ancestors + [id] {
            let frame = try XCTUnwrap(try daemon.result("widget.get", #"{"id": "\#(widget)"}"#)["frame"] as? [String: Any], widget)
            x += frame["x"] as? Double ?? 0
            y += frame["y"] as? Double ?? 0
            width = frame["width"] as? Double ?? 0
            height = frame["height"] as? Double ?? 0
        }
        return (Int(x + width / 2), Int(y + height / 2))
    }

    private func clickStart(input: Bool) throws -> [ControlEvent] {
        let hmi = Self.repository.appendingPathComponent("scenes/hmi-panel.yaml").path
        let (daemon, port, _) = try start("vnc-input-\(input)", scene: hmi, vnc: "  input: \(input)")
        let events = try ControlEventStream(daemon, events: ["input"])
        let (x, y) = try centre(of: "start", ancestors: ["layout", "controls"], in: daemon)
        let clicked = try vncClient(["click", "127.0.0.1", "\(port)", password, "\(x)", "\(y)"])
        XCTAssertEqual(clicked.status, 0, clicked.text)
        // The client's update came back after its clicks, so kioskd has handled them, and any event they made was
        // queued on this connection before the reply to this request.
        _ = try events.request(#"{"id": "after", "cmd": "ping"}"#)
        let seen: [ControlEvent]
        if input {
            seen = [try events.waitFor("a press of start", timeout: 10) { $0.string("kind") == "press" }]
        } else {
            seen = try events.waitForQuiet("input events", quiet: 0.3, timeout: 10) { _ in true }
        }
        XCTAssertEqual(daemon.stop().status, 0)
        return seen
    }

    func testWithInputOnAClickPressesTheButton() throws {
        let seen = try clickStart(input: true)
        XCTAssertTrue(seen.contains { $0.string("kind") == "press" && $0.string("id") == "start" }, "\(seen)")
    }

    func testViewOnlyAClickPressesNothing() throws {
        let seen = try clickStart(input: false)
        XCTAssertFalse(seen.contains { $0.string("kind") == "press" }, "\(seen)")
    }

    /// A client that logs in (security None), asks for a whole frame, and never reads; its receive buffer is kept
    /// small so it fills at once.
    /// `sending: false` connects and sends nothing (a handshake under way).
    private func slowClient(port: Int, sending: Bool = true) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("socket: errno \(errno)") }
        var small: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw ControlTestError("connect 127.0.0.1:\(port): errno \(errno)") }
        let hello = Array("RFB 003.008\n".utf8) + [1, 1] + Self.updateRequest(incremental: false)
        if sending { _ = hello.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        return fd
    }

    private static func updateRequest(incremental: Bool) -> [UInt8] { [3, incremental ? 1 : 0, 0, 0, 0, 0, 0x01, 0x40, 0x00, 0xF0] }

    /// Sends every client an incremental update request every 10 ms, as a viewer does, while it never reads what comes.
    private final class Requester: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        private let done = DispatchSemaphore(value: 0)

        init(_ clients: [Int32]) {
            let request = VNCRemoteViewTests.updateRequest(incremental: true)
            Thread { [self] in
                while !isStopped {
                    for fd in clients {
                        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                    }
                    usleep(10_000)  // the client's own pace, not a wait for kioskd
                }
                done.signal()
            }.start()
        }

        private var isStopped: Bool { lock.withLock { stopped } }

        func stop() {
            lock.withLock { stopped = true }
            done.wait()
        }
    }

    private func missedAndFlipped(_ daemon: ControlledKioskd) throws -> (missed: Int, flipped: Int) {
        let stats = try daemon.result("stats")
        return (stats["missed_vblanks"] as? Int ?? -1, stats["frames_flipped"] as? Int ?? -1)
    }

    /// Waits for `flips` more flips and returns the vblanks missed meanwhile.
    private func missedOver(_ flips: Int, _ daemon: ControlledKioskd) throws -> Int {
        let start = try missedAndFlipped(daemon)
        let end = try Poll.until("\(flips) more flips", timeout: 30, reading: { try self.missedAndFlipped(daemon) },
                                 satisfies: { $0.flipped >= start.flipped + flips })
        return end.missed - start.missed
    }

    /// The flip path never waits on a viewer: 20 clients that never read (their receive buffers full at once) ask for
    /// updates every 10 ms over 240 flips of the animated dashboard, and what the loop spends in the VNC server,
    /// counted on the main thread's own CPU clock (so a loaded host's preemption does not count, and the figure does
    /// not depend on the host's other load as missed vblanks do), stays a small share of each frame: on average at
    /// most `perFlipBound` a flip, and no single handler longer than `longestBound`. A server that waited on a socket,
    /// spun on EAGAIN, encoded or encrypted on the loop, or copied a frame per client would blow through both; one that
    /// blocked on a socket would stop the flips, and the 240 would not come within the deadline. The missed vblanks of
    /// the same windows, alone and crowded, are reported beside them, not asserted: they follow the host's load.
    func testTwentyClientsThatNeverReadCostTheLoopLittleAndWaitForNothing() throws {
        // The default dashboard animates, so frames flip continuously while clients are connected.
        let (daemon, port, _) = try start("vnc-slow", scene: "default", vnc: "", maxClients: 32, withPassword: false)
        XCTAssertGreaterThanOrEqual(try missedAndFlipped(daemon).missed, 0, "stats has missed_vblanks")
        let aloneMissed = try missedOver(240, daemon)
        var clients: [Int32] = []
        for _ in 0..<20 { clients.append(try slowClient(port: port)) }
        try Poll.until("20 VNC clients logged in and sent a frame", timeout: 20) {
            let vnc = (try daemon.result("stats")["vnc"] as? [[String: Any]])?.first
            return vnc?["clients"] as? Int == 20 && vnc?["updates_sent"] as? Int ?? 0 >= 20
        }
        let requester = Requester(clients)
        let before = try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first)
        let flipsBefore = try missedAndFlipped(daemon).flipped
        let crowdedMissed = try missedOver(240, daemon)
        let vnc = try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first)
        let flips = try missedAndFlipped(daemon).flipped - flipsBefore
        _ = try daemon.result("ping")
        requester.stop()
        for fd in clients { close(fd) }
        let spent = (vnc["loop_cpu_us"] as? Int ?? .max) - (before["loop_cpu_us"] as? Int ?? 0)
        let longest = vnc["loop_cpu_longest_us"] as? Int ?? .max
        let figures = "VNC on the loop: \(spent) µs CPU over \(flips) flips (\(spent / max(flips, 1)) µs a flip), longest handler \(longest) µs; "
            + "vblanks missed over 240 flips: \(aloneMissed) alone, \(crowdedMissed) with 20 slow clients; \(vnc)"
        print("vnc-slow-clients: \(figures)")
        XCTAssertGreaterThan(spent, 0, "the server's time is counted: \(figures)")
        XCTAssertLessThanOrEqual(spent / max(flips, 1), Self.perFlipBound, figures)
        XCTAssertLessThanOrEqual(longest, Self.longestBound, figures)
        XCTAssertEqual(vnc["clients"] as? Int, 20, "none was dropped: \(vnc)")
        XCTAssertGreaterThan((vnc["updates_sent"] as? Int ?? 0), before["updates_sent"] as? Int ?? 0, "served while measured: \(figures)")
        // What waits for them is at most one update each (a whole frame at most), however long they do not read.
        XCTAssertLessThanOrEqual(vnc["queued_bytes"] as? Int ?? .max, 20 * (320 * 240 * 4 + 16), "\(vnc)")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    /// The VNC server's share of the loop a flip, on average, with 20 slow viewers, in µs: 9% of a 60 Hz frame
    /// (measured: 447 µs in a debug build on a 2-core host at load 13; docs/bench-log.md).
    static let perFlipBound = 1500
    /// The longest any one of its handlers may hold the loop, in µs: a quarter of a 60 Hz frame (measured: 659 µs).
    static let longestBound = 4000

    /// Connects to `port`, sends `bytes`, and returns everything kioskd sends until it closes the connection.
    private func exchange(_ bytes: [UInt8], port: Int) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ControlTestError("connect 127.0.0.1:\(port): errno \(errno)") }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return received }
            guard n > 0 else { throw ControlTestError("kioskd did not close the connection (errno \(errno)) after sending \(received.count) bytes") }
            received += buffer[0..<n]
        }
    }

    func testHostilePeersAreEachClosedWithAReasonAndTheLoopAnswers() throws {
        let (daemon, port, _) = try start("vnc-hostile", scene: "default", vnc: "", maxClients: 2)
        let version = Array("RFB 003.008\n".utf8)
        // Garbage before the handshake: kioskd's version, then the close.
        XCTAssertEqual(try exchange(Array("GET / HTTP/1.1\r\nHost: kiosk\r\n\r\n".utf8), port: port), version)
        // A wrong response to the challenge: a failed result with the reason.
        let failed = try exchange(version + [2] + [UInt8](repeating: 0x55, count: 16), port: port)
        XCTAssertEqual(Array(failed.dropFirst(12 + 2 + 16).prefix(4)), [0, 0, 0, 1])
        XCTAssertTrue(String(decoding: failed.dropFirst(12 + 2 + 16 + 8), as: UTF8.self).contains("authentication failed"))
        // A security type not offered (None, while a password is set).
        let none = try exchange(version + [1], port: port)
        XCTAssertTrue(String(decoding: none.dropFirst(12 + 2 + 8), as: UTF8.self).contains("security type 1 was not offered"), "\(none)")
        // Over the limit: two clients hold their places (a handshake under way), the third is told why.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<2 { held.append(try slowClient(port: port, sending: false)) }
        try Poll.until("two VNC clients connected", timeout: 10) {
            (try daemon.result("stats")["vnc"] as? [[String: Any]])?.first?["clients"] as? Int == 2
        }
        let turnedAway = try exchange(version, port: port)
        XCTAssertEqual(Array(turnedAway.prefix(13)), version + [0])
        XCTAssertEqual(String(decoding: turnedAway.dropFirst(17), as: UTF8.self), "too many VNC clients (at most 2)")
        // A flood: 20 more connections that send nothing. 8 beyond the limit are held while they would be told why;
        // the rest are closed at once, so the descriptors kioskd holds stay bounded.
        var flood: [Int32] = []
        for _ in 0..<20 { flood.append(try slowClient(port: port, sending: false)) }
        try Poll.until("the flood turned away", timeout: 10) {
            let vnc = (try daemon.result("stats")["vnc"] as? [[String: Any]])?.first
            return vnc?["clients_refused"] as? Int == 21 && vnc?["clients"] as? Int == 10
        }
        _ = try daemon.result("ping")
        for fd in flood + held { close(fd) }
        held = []
        try Poll.until("the connections closed", timeout: 10) {
            (try daemon.result("stats")["vnc"] as? [[String: Any]])?.first?["clients"] as? Int == 0
        }
        // Guessing: after 5 failed logins within a minute, every viewer is turned away for a minute, told why.
        for _ in 0..<4 { _ = try exchange(version + [2] + [UInt8](repeating: 0x55, count: 16), port: port) }
        let locked = try exchange(version, port: port)
        XCTAssertEqual(Array(locked.prefix(13)), version + [0], "\(locked)")
        XCTAssertTrue(String(decoding: locked.dropFirst(17), as: UTF8.self).hasPrefix("too many failed logins: VNC logins are refused for "),
                      String(decoding: locked.dropFirst(17), as: UTF8.self))
        _ = try daemon.result("ping")
        let vnc = try XCTUnwrap((try daemon.result("stats")["vnc"] as? [[String: Any]])?.first)
        XCTAssertEqual(vnc["clients_refused"] as? Int, 22, "\(vnc)")
        XCTAssertEqual(vnc["authentication_failures"] as? Int, 5, "\(vnc)")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    func testAnUnreadablePasswordFileIsALocatedError() throws {
        let dir = try KioskdProcess.scratchDirectory("vnc-password-missing")
        let config = dir.appendingPathComponent("kioskd.yaml")
        let port = try LoopbackPort.free()
        try "vnc:\n  listen: \"127.0.0.1:\(port)\"\n  password_file: missing.password\n".write(to: config, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60", "--frames", "1"],
                                           timeout: 60)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("\(config.path):3:18: vnc.password_file: \(dir.path)/missing.password: cannot read it: ENOENT"),
                      result.stderr)
    }
}
