import Foundation
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A scene named by URL (`--scene https://…`, `scene.load {url}`) against a real HTTP server on loopback: shown
/// with its relative image resolved against its URL, a new version shown at SIGHUP, a broken version refused with
/// its located errors in an `error` event and the old one kept, the cached scene shown by a kiosk restarted with the
/// server gone, the diagnostic page while no copy is held and the scene once the server has it, and hostile
/// answers (a huge body, a file that is not YAML, a redirect loop) refused with the scene on screen unchanged.
final class RemoteSceneTests: XCTestCase {
    private var daemon: ControlledKioskd?

    override func tearDownWithError() throws {
        daemon?.stop()
        daemon = nil
    }

    /// A solid PNG of 16x16 in `rgb`.
    private func png(_ rgb: UInt32) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: 16 * 16 * 4)
        for i in stride(from: 0, to: bytes.count, by: 4) {
            bytes[i] = UInt8(rgb & 0xFF); bytes[i + 1] = UInt8((rgb >> 8) & 0xFF); bytes[i + 2] = UInt8(rgb >> 16); bytes[i + 3] = 0xFF
        }
        return Data(try encodePNG(xrgb8888: bytes, size: Size(width: 16, height: 16), stride: 64))
    }

    /// A scene filling the screen with `background`, and the image `logo.png` (relative: beside the scene on the
    /// server) in the top-left corner.
    private func scene(_ background: String) -> String {
        """
        background: "\(background)"
        widgets:
          - {type: image, path: logo.png, fit: fill, x: 0, y: 0, width: 16, height: 16}
        """
    }

    /// The screen's pixels at the centre and in the logo (0xRRGGBB).
    private func pixels(_ daemon: ControlledKioskd, in dir: URL) throws -> (centre: UInt32, logo: UInt32) {
        let file = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
        _ = try daemon.result("screenshot", #"{"path": "\#(file.path)"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        let shot = try PNGFile(contentsOf: file)
        return (shot.rgb(x: 32, y: 24), shot.rgb(x: 8, y: 8))
    }

    private func start(_ url: String, in dir: URL) throws -> ControlledKioskd {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", url, "--screenshot-dir", dir.path],
                                          environment: ["CACHE_DIRECTORY": dir.appendingPathComponent("cache").path])
        self.daemon = daemon
        return daemon
    }

    func testASceneByURLIsShownRenewedRefusedWhenBrokenAndKeptOffline() throws {
        let server = try FaultServer("remote-scene")
        try server.write("scene.yaml", scene("#FF0000"))
        try png(0x0000FF).write(to: server.directory.appendingPathComponent("logo.png"))
        let url = server.url("/files/scene.yaml")
        let dir = try KioskdProcess.scratchDirectory("remote-scene")
        var daemon = try start(url, in: dir)
        try Poll.until("the scene by URL on screen with its relative image", timeout: 30) {
            let shown = try pixels(daemon, in: dir)
            return shown.centre == 0xFF0000 && shown.logo == 0x0000FF
        }
        XCTAssertEqual(try daemon.result("scene.get")["source"] as? String, url)

        // A new version: shown at SIGHUP.
        try server.write("scene.yaml", scene("#00FF00"))
        kill(daemon.pid, SIGHUP)
        try Poll.until("the new version on screen", timeout: 30) { try pixels(daemon, in: dir).centre == 0x00FF00 }

        // A broken version: refused with its located error, the scene on screen kept.
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["error"])
        try server.write("scene.yaml", "background: \"#0000FF\"\nwidgets:\n  - {type: nosuchwidget}\n")
        kill(daemon.pid, SIGHUP)
        let refused = try events.waitFor("the broken version refused", timeout: 30) { $0.string("code") == "invalid_scene" }
        let message = try XCTUnwrap(refused.string("message"))
        XCTAssertTrue(message.contains("\(url):3:"), "the error is located in the remote file: \(message)")
        XCTAssertTrue(message.contains("nosuchwidget"), message)
        XCTAssertTrue(message.contains("the cached one stays"), message)
        XCTAssertEqual(try pixels(daemon, in: dir).centre, 0x00FF00, "the valid version stays on screen")
        XCTAssertEqual(daemon.stop().status, 0)
        self.daemon = nil

        // The server gone: a new kiosk shows the last valid version from the cache.
        server.stop()
        daemon = try start(url, in: dir)
        try Poll.until("the cached scene shown with the server gone", timeout: 30) {
            let shown = try pixels(daemon, in: dir)
            return shown.centre == 0x00FF00 && shown.logo == 0x0000FF
        }
        XCTAssertTrue(daemon.isRunning)
    }

    /// Started with no copy and nothing on the server: the diagnostic page names the URL and why; once the server
    /// has the scene, it is shown.
    func testWithNoCopyTheDiagnosticPageShowsUntilTheSceneArrives() throws {
        let server = try FaultServer("remote-scene-late")
        let url = server.url("/files/late.yaml")
        let dir = try KioskdProcess.scratchDirectory("remote-scene-late")
        let daemon = try start(url, in: dir)
        try Poll.until("the diagnostic page saying why", timeout: 30) {
            let data = try daemon.result("data.get")
            let values = data["values"] as? [String: Any] ?? data
            return (values["file"] as? String) == url && ((values["problem"] as? String)?.contains("HTTP status 404") ?? false)
        }
        try server.write("late.yaml", scene("#FF0000"))
        try png(0x0000FF).write(to: server.directory.appendingPathComponent("logo.png"))
        try Poll.until("the scene once the server has it", timeout: 30) { try pixels(daemon, in: dir).centre == 0xFF0000 }
    }

    /// `scene.load {url}` refuses a body over the scene limit, a file that is no scene and a redirect loop, each with
    /// its reason, and the scene on screen stays; a valid one is shown.
    func testHostileScenesAreRefusedAndAValidOneIsLoaded() throws {
        let server = try FaultServer("remote-scene-hostile")
        let dir = try KioskdProcess.scratchDirectory("remote-scene-hostile")
        let local = dir.appendingPathComponent("local.yaml")
        try "background: \"#FFFFFF\"\nwidgets: []\n".write(to: local, atomically: true, encoding: .utf8)
        let daemon = try start(local.path, in: dir)
        try Poll.until("the local scene", timeout: 30) { try pixels(daemon, in: dir).centre == 0xFFFFFF }

        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: server.directory.appendingPathComponent("noise.bin"))
        let cases: [(path: String, code: String, words: String)] = [
            ("/big", "io_error", "larger than the limit"),
            ("/big-declared", "io_error", "larger than the limit"),
            ("/files/noise.bin", "invalid_scene", server.url("/files/noise.bin")),
            ("/redirect/50", "io_error", "redirect"),
            ("/status/500", "io_error", "HTTP status 500"),
        ]
        for c in cases {
            let started = Date()
            let error = try daemon.error("scene.load", #"{"url": "\#(server.url(c.path))"}"#)
            XCTAssertEqual(error.code, c.code, "\(c.path): \(error.message)")
            XCTAssertTrue(error.message.lowercased().contains(c.words.lowercased()), "\(c.path): \(error.message)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 15, "\(c.path) answered promptly")
            XCTAssertEqual(try pixels(daemon, in: dir).centre, 0xFFFFFF, "\(c.path): the scene on screen stays")
        }
        XCTAssertNotNil(try daemon.result("ping"))
        try Poll.until("the server saw the huge body cut off", timeout: 10) { server.sent("/big") != nil }
        XCTAssertLessThan(try XCTUnwrap(server.sent("/big")), 8 << 20, "the huge body was cut off near the 4 MiB scene limit")

        for args in [#"{"url": "ftp://host/scene.yaml"}"#, #"{"url": 3}"#, #"{"url": "https:///x.yaml"}"#,
                     #"{"url": "https://h/x.yaml", "path": "/x.yaml"}"#] {
            let error = try daemon.error("scene.load", args)
            XCTAssertEqual(error.code, "invalid_argument", "\(args): \(error.message)")
        }

        let check = try KioskdProcess.run(["check", server.url("/files/ok.yaml")])
        XCTAssertEqual(check.status, 1)
        XCTAssertTrue(check.stderr.contains("kioskd check reads a file; fetch the scene"), check.stderr)

        try server.write("ok.yaml", "background: \"#00FF00\"\nwidgets: []\n")
        let loaded = try daemon.result("scene.load", #"{"url": "\#(server.url("/files/ok.yaml"))"}"#)
        XCTAssertEqual(loaded["source"] as? String, server.url("/files/ok.yaml"))
        try Poll.until("the scene loaded by URL", timeout: 30) { try pixels(daemon, in: dir).centre == 0x00FF00 }
    }
}
