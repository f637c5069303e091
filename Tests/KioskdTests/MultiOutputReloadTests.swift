import Foundation
import KioskTestSupport
import XCTest

/// SIGHUP with an `outputs:` section: every output's scene file is read again, not the first output's alone, and
/// systemd hears READY=1 once all of them are. Each output's scene runner listens to the signal itself, beside the
/// service's listener.
final class MultiOutputReloadTests: XCTestCase {
    /// A scene whose one text widget, `t`, shows `text`.
    private func writeScene(_ file: URL, text: String) throws {
        try Data("size: display\npages:\n  - name: main\n    widgets:\n      - {id: t, type: text, text: \(text), x: 0, y: 0, width: 100%, height: 50%}\n".utf8)
            .write(to: file, options: .atomic)
    }

    func testSIGHUPReloadsTheSceneOfEveryOutputAndThenSaysReady() throws {
        let dir = try KioskdProcess.scratchDirectory("multi-output-reload")
        let left = dir.appendingPathComponent("left.yaml"), right = dir.appendingPathComponent("right.yaml")
        try writeScene(left, text: "left-first")
        try writeScene(right, text: "right-first")
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            scene: left.yaml
            outputs:
              - {connector: HDMI-A-1, mode: 320x240@60, scene: left.yaml}
              - {connector: HDMI-A-2, mode: 200x300@50, scene: right.yaml}
            """.write(to: config, atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        // Without watching, only SIGHUP can read the files again.
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--config", config.path, "--no-watch", "--log-level", "info"],
                                          environment: ["NOTIFY_SOCKET": notify.path])
        func shown(_ output: String) throws -> String? {
            try daemon.result("widget.get", #"{"id": "t", "output": "\#(output)"}"#)["text"] as? String
        }
        XCTAssertEqual(try shown("HDMI-A-1"), "left-first")
        XCTAssertEqual(try shown("HDMI-A-2"), "right-first")
        _ = try notify.waitFor("READY=1 at the first complete frame") { $0.contains("READY=1") }
        let events = try ControlEventStream(daemon, events: ["scene"])

        try writeScene(left, text: "left-second")
        try writeScene(right, text: "right-second")
        daemon.process.signal(SIGHUP)

        _ = try notify.waitFor("RELOADING=1") { $0.contains("RELOADING=1") }
        let ready = try notify.waitFor("READY=1 after the reload") { $0.contains("READY=1") }
        XCTAssertFalse(ready.contains("reload rejected"), ready)
        // READY=1 went out once every output's new scene was read and accepted, not the first's alone: each was
        // logged before it.
        let logged = daemon.process.stderrSoFar
        XCTAssertTrue(logged.contains("left.yaml reloaded"), logged)
        XCTAssertTrue(logged.contains("right.yaml reloaded"), logged)
        // Each new scene replaces the old one once it has rendered. The first output's scene events carry no
        // `output`; the others' name theirs.
        let loaded = try events.waitFor(2, "each output's scene loaded again") { event in
            event.string("kind") == "loaded"
        }
        XCTAssertEqual(Set(loaded.map { $0.string("output") ?? "HDMI-A-1" }), ["HDMI-A-1", "HDMI-A-2"], "\(loaded)")
        XCTAssertEqual(Set(loaded.compactMap { $0.string("source").map { URL(fileURLWithPath: $0).lastPathComponent } }),
                       ["left.yaml", "right.yaml"], "\(loaded)")
        XCTAssertEqual(try shown("HDMI-A-1"), "left-second")
        XCTAssertEqual(try shown("HDMI-A-2"), "right-second")

        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }
}
