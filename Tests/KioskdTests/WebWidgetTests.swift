import Foundation
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// The `web` widget in a running kioskd (headless): the page is composed beside the other widgets; its web process
/// killed with SIGKILL leaves the last frame on screen and the page comes back in a new web process; a page that
/// cannot be loaded leaves the placeholder and says why, the rest of the scene running.
final class WebWidgetTests: XCTestCase {
    private func pixel(_ daemon: ControlledKioskd, in dir: URL, x: Int, y: Int) throws -> UInt32 {
        let file = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
        _ = try daemon.result("screenshot", #"{"path": "\#(file.path)"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        return try PNGFile(contentsOf: file).rgb(x: x, y: y)
    }

    private func state(_ daemon: ControlledKioskd, _ id: String) throws -> [String: Any] {
        try daemon.result("web.state", #"{"id": "\#(id)"}"#)
    }

    /// The web processes kioskd started: its children named WPEWebProcess.
    private func webProcesses(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            let name = stat[stat.index(after: stat.firstIndex(of: "(")!)..<close]
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            return name.hasPrefix("WPEWebProcess") && fields.count > 1 && Int32(fields[1]) == parent
        }
    }

    func testAPageBesideOtherWidgetsSurvivesItsWebProcessBeingKilledAndItsServerGoingAway() throws {
        let dir = try KioskdProcess.scratchDirectory("web-widget")
        let site = dir.appendingPathComponent("site")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try "<html><body style='margin:0;background:#e02000'><p style='color:white'>menu of the day</p></body></html>"
            .write(to: site.appendingPathComponent("menu.html"), atomically: true, encoding: .utf8)
        let server = try LocalHTTPServer(directory: site.path)
        try server.start()
        defer { server.stop() }
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            background: "#000000"
            widgets:
              - {id: page, type: web, url: "\(server.url("menu.html"))", x: 0, y: 0, width: 160, height: 120}
              - {id: side, type: rect, background: "#00ff00", x: 160, y: 0, width: 160, height: 120}
              - {id: clock, type: clock, format: "%H:%M:%S", x: 160, y: 120, width: 160, height: 120}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path,
                                           "--screenshot-dir", dir.path])
        defer { _ = daemon.stop() }
        try Poll.until("the page on screen", timeout: 60) { try pixel(daemon, in: dir, x: 80, y: 100) == 0xE02000 }
        XCTAssertEqual(try pixel(daemon, in: dir, x: 240, y: 60), 0x00FF00, "the widget beside the page")
        let loaded = try state(daemon, "page")
        XCTAssertEqual(loaded["state"] as? String, "loaded")
        XCTAssertGreaterThanOrEqual(loaded["frames_shown"] as? Int ?? 0, 1, "\(loaded)")
        XCTAssertEqual(loaded["current_url"] as? String, server.url("menu.html"))
        // Scripts are off unless the config allows them.
        XCTAssertEqual(try daemon.error("web.eval", #"{"script": "1"}"#).code, "permission_denied")

        // The web process killed: the last frame stays, and the page comes back from a new web process.
        let victims = webProcesses(of: daemon.pid)
        XCTAssertEqual(victims.count, 1, "one web process for one page: \(victims)")
        for pid in victims { kill(pid, SIGKILL) }
        try Poll.until("the web process's end seen", timeout: 30) { (try state(daemon, "page")["process_exits"] as? Int ?? 0) >= 1 }
        XCTAssertEqual(try pixel(daemon, in: dir, x: 80, y: 100), 0xE02000, "the last frame stays while the page is gone")
        try Poll.until("the page loaded again within 10 s", timeout: 10) {
            let s = try state(daemon, "page")
            return s["state"] as? String == "loaded" && (s["restarts"] as? Int ?? 0) >= 1
        }
        let again = webProcesses(of: daemon.pid)
        XCTAssertEqual(again.count, 1, "a new web process: \(again)")
        XCTAssertTrue(Set(again).isDisjoint(with: victims), "not the killed one")
        XCTAssertEqual(try pixel(daemon, in: dir, x: 80, y: 100), 0xE02000)
        XCTAssertGreaterThanOrEqual(try daemon.result("stats")["web_restarts"] as? Int ?? 0, 1)

        // The server gone: a reload fails, the last frame stays with the offline badge in the widget's corner.
        server.stop()
        _ = try daemon.result("web.reload", #"{"id": "page"}"#)
        try Poll.until("the failed load", timeout: 30) { try state(daemon, "page")["state"] as? String == "failed" }
        try Poll.until("the badge on screen", timeout: 10) { try pixel(daemon, in: dir, x: 150, y: 10) != 0xE02000 }
        XCTAssertEqual(try pixel(daemon, in: dir, x: 80, y: 100), 0xE02000, "the last frame under the badge")
        let flips = try daemon.framesFlipped()
        // The server back: the page comes back within the backoff, and the badge goes.
        try server.start()
        try Poll.until("the page back, badge gone", timeout: 30) {
            try state(daemon, "page")["state"] as? String == "loaded" && pixel(daemon, in: dir, x: 150, y: 10) == 0xE02000
        }
        XCTAssertGreaterThan(try daemon.framesFlipped(), flips, "frames kept flipping")
        XCTAssertTrue(daemon.isRunning)
    }

    func testAPageThatCannotLoadLeavesItsPlaceholderAndSaysWhy() throws {
        let dir = try KioskdProcess.scratchDirectory("web-widget-dead")
        let port = try LoopbackPort.free()
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            background: "#000000"
            widgets:
              - {id: page, type: web, url: "http://127.0.0.1:\(port)/board", background: "#2040ff", x: 0, y: 0, width: 160, height: 120,
                 allowed_origins: ["https://cdn.example.com"]}
              - {id: side, type: rect, background: "#00ff00", x: 160, y: 0, width: 160, height: 120}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path,
                                           "--screenshot-dir", dir.path])
        defer { _ = daemon.stop() }
        try Poll.until("the failure reported", timeout: 60) { (try state(daemon, "page")["failures"] as? Int ?? 0) >= 1 }
        let failed = try state(daemon, "page")
        XCTAssertTrue((failed["error"] as? String ?? "").contains("127.0.0.1:\(port)"), "\(failed)")
        XCTAssertNotNil(failed["retry_in"] as? Double, "a load again is planned: \(failed)")
        XCTAssertEqual(try pixel(daemon, in: dir, x: 80, y: 60), 0x2040FF, "the placeholder (the widget's background)")
        XCTAssertEqual(try pixel(daemon, in: dir, x: 240, y: 60), 0x00FF00)
        // Bad requests get errors that name the problem.
        let bad = try daemon.error("web.navigate", #"{"id": "page", "url": "ftp://example.com/"}"#)
        XCTAssertEqual(bad.code, "invalid_argument")
        XCTAssertTrue(bad.message.contains("ftp"), bad.message)
        let outside = try daemon.error("web.navigate", #"{"id": "page", "url": "https://elsewhere.example.com/"}"#)
        XCTAssertEqual(outside.code, "invalid_argument")
        XCTAssertTrue(outside.message.contains("allowed_origins"), outside.message)
        let missing = try daemon.error("web.state", #"{"id": "nope"}"#)
        XCTAssertEqual(missing.code, "not_found")
        XCTAssertTrue(missing.message.contains("page"), "names the widgets there are: \(missing.message)")
    }

    func testScriptsRunWhenTheConfigAllowsThemAndAPageOverItsMemoryLimitIsRestarted() throws {
        let dir = try KioskdProcess.scratchDirectory("web-widget-eval")
        let page = dir.appendingPathComponent("page.html")
        try """
            <html><body style="margin:0;background:#336699"><script>
            window.hog = [];
            window.grow = () => { setInterval(() => { for (let i = 0; i < 40; i++) hog.push(new Array(262144).fill(i)) }, 50) };
            </script></body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            widgets:
              - {id: page, type: web, url: "\(page.absoluteString)", x: 0, y: 0, width: 160, height: 120}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("kioskd.yaml")
        try "web: {allow_eval: true, memory_limit_mb: 200}\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60",
                                           "--scene", scene.path, "--screenshot-dir", dir.path])
        defer { _ = daemon.stop() }
        try Poll.until("the page loaded", timeout: 60) { try state(daemon, "page")["state"] as? String == "loaded" }
        XCTAssertEqual(try daemon.result("web.eval", #"{"script": "6 * 7"}"#)["value"] as? String, "42")
        let failed = try daemon.error("web.eval", #"{"script": "no.such.thing"}"#)
        XCTAssertTrue(failed.message.contains("script failed"), failed.message)

        // The page allocates without end: WebKit's limit ends its web process, not the kiosk, whose memory stays flat.
        let before = try XCTUnwrap(residentKiB(of: daemon.pid))
        _ = try daemon.result("web.eval", #"{"script": "grow(); 1"}"#)
        try Poll.until("the web process ended over its limit", timeout: 60) {
            (try state(daemon, "page")["process_exits"] as? Int ?? 0) >= 1
        }
        let ended = try state(daemon, "page")
        XCTAssertTrue((ended["error"] as? String ?? "").contains("memory"), "\(ended)")
        let after = try XCTUnwrap(residentKiB(of: daemon.pid))
        XCTAssertLessThan(after - before, 16 * 1024, "kioskd's own resident memory stayed flat: \(before) KiB -> \(after) KiB")
        XCTAssertTrue(daemon.isRunning)
    }

    func testAPageThatStopsAnsweringHasItsWebProcessEndedAndLoadedAgain() throws {
        let dir = try KioskdProcess.scratchDirectory("web-widget-hang")
        let page = dir.appendingPathComponent("page.html")
        // Drawn, then the page's only thread spins for ever: no frame and no answer to a script.
        try """
            <html><body style="margin:0;background:#208040"><script>
            setTimeout(() => { for (;;) {} }, 300);
            </script></body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            widgets:
              - {id: page, type: web, url: "\(page.absoluteString)", x: 0, y: 0, width: 160, height: 120}
              - {id: clock, type: clock, format: "%H:%M:%S", x: 160, y: 0, width: 160, height: 120}
            """.write(to: scene, atomically: true, encoding: .utf8)
        // The watch shortened from 10 s (a ping every 5 s) to 2 s (a ping every second): the same watch, sooner.
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path,
                                           "--screenshot-dir", dir.path, "--web-hang-timeout", "2"])
        defer { _ = daemon.stop() }
        try Poll.until("the page on screen", timeout: 60) { try pixel(daemon, in: dir, x: 80, y: 60) == 0x208040 }
        let flips = try daemon.framesFlipped()
        // A ping every second, ended after 2 s without an answer: within 4 s of the hang.
        try Poll.until("the hang found and the web process ended", timeout: 15, interval: 0.1) {
            let s = try state(daemon, "page")
            return (s["hangs"] as? Int ?? 0) >= 1 && (s["process_exits"] as? Int ?? 0) >= 1
        }
        XCTAssertEqual(try pixel(daemon, in: dir, x: 80, y: 60), 0x208040, "the last frame stays")
        try Poll.until("the page loaded again in a new web process", timeout: 15) {
            (try state(daemon, "page")["restarts"] as? Int ?? 0) >= 1
        }
        XCTAssertGreaterThan(try daemon.framesFlipped(), flips, "the rest of the scene kept flipping")
        XCTAssertTrue(daemon.isRunning)
    }

    func testTheBridgeGivesThePageTheScenesDataAndItsEmitsBecomeEvents() throws {
        let dir = try KioskdProcess.scratchDirectory("web-widget-bridge")
        let page = dir.appendingPathComponent("page.html")
        // The page answers each greeting it is given with an emit carrying it back.
        try """
            <html><body style="margin:0;background:#102030"><script>
            kioskd.on('greeting', v => kioskd.emit('seen', {value: v, had: kioskd.data.greeting}));
            </script></body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            data: {greeting: "hello"}
            widgets:
              - {id: page, type: web, url: "\(page.absoluteString)", bridge: true, x: 0, y: 0, width: 160, height: 120}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path])
        defer { _ = daemon.stop() }
        let events = try ControlEventStream(daemon, events: ["web"])
        func emitted(_ value: String) throws {
            let event = try events.waitFor("the page's emit of '\(value)'") { event in
                event.name == "web" && event.string("kind") == "emit" && (event.string("payload") ?? "").contains(value)
            }
            XCTAssertEqual(event.string("action"), "seen")
            XCTAssertEqual(event.string("id"), "page")
            let payload = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data((event.string("payload") ?? "").utf8)) as? [String: String])
            XCTAssertEqual(payload, ["value": value, "had": value])
        }
        // The scene's data at load, then each change as it is set.
        try emitted("hello")
        _ = try daemon.result("data.set", #"{"values": {"greeting": "good evening"}}"#)
        try emitted("good evening")
    }

    func testAWebWidgetWithBadPropertiesIsALocatedError() throws {
        let dir = try KioskdProcess.scratchDirectory("web-widget-bad")
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            widgets:
              - {type: web, url: "ftp://example.com/"}
              - {type: web, url: "https://example.com", zoom: 9, y: 10}
              - {type: web, url: "https://example.com", allowed_origins: ["https://a.example/path"], y: 20}
              - {type: web, y: 30}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["check", scene.path])
        XCTAssertNotEqual(result.status, 0)
        let text = result.stdout + result.stderr
        XCTAssertTrue(text.contains("scene.yaml:2"), text)
        XCTAssertTrue(text.contains("'ftp' is not allowed"), text)
        XCTAssertTrue(text.contains("zoom"), text)
        XCTAssertTrue(text.contains("is not an origin"), text)
        XCTAssertTrue(text.contains("needs 'url'"), text)
    }
}
