import Foundation
import KioskTestSupport
import XCTest

/// `kioskd run --scene`: scene files shown without a display, the bundled default scene, live reload through
/// inotify and SIGHUP, and bad scenes refused with their location.
final class SceneRunTests: XCTestCase {
    private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func testHeadlessSceneFileRendersToAScreenshot() throws {
        let dir = try KioskdProcess.scratchDirectory("scene-run")
        let scene = dir.appendingPathComponent("scene.yaml"), png = dir.appendingPathComponent("shot.png")
        try Data("""
            size: display
            background: "#102030"
            pages:
              - name: main
                widgets:
                  - {type: rect, background: "#ff8000", x: 10%, y: 10%, width: 20%, height: 20%}
                  - {type: text, text: "Hello kiosk", x: 50%, y: 10%, width: 40%, height: 10%, foreground: white}
            """.utf8).write(to: scene)
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--mode", "640x480", "--scene", scene.path,
                                       "--frames", "30", "--screenshot", png.path, "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let image = try PNGFile(contentsOf: png)
        XCTAssertEqual(image.width, 640)
        XCTAssertEqual(image.height, 480)
        XCTAssertEqual(image.rgb(x: 100, y: 100), 0xFF8000, "the rect at 10%..30%")
        XCTAssertEqual(image.rgb(x: 600, y: 400), 0x102030, "the scene background")
        XCTAssertGreaterThan(image.countPixels(in: (320, 48, 576, 96)) { $0 != 0x102030 }, 50, "the text has ink")
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 30)
    }

    func testTheDefaultSceneIsTheBundledDashboard() throws {
        let dir = try KioskdProcess.scratchDirectory("scene-default")
        let png = dir.appendingPathComponent("shot.png")
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--frames", "20", "--screenshot", png.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let image = try PNGFile(contentsOf: png)
        XCTAssertEqual(image.width, 1024)
        // The dashboard's background is a dark blue gradient; the cards and the ticker band add lighter pixels.
        let distinct = Set((0..<64).flatMap { i in (0..<48).map { j in image.rgb(x: i * 16, y: j * 16) } })
        XCTAssertGreaterThan(distinct.count, 8, "a dashboard, not a blank screen")
    }

    func testAnInvalidSceneFileStopsWithItsLocation() throws {
        let dir = try KioskdProcess.scratchDirectory("scene-invalid")
        let scene = dir.appendingPathComponent("bad.yaml")
        try Data("pages:\n  - name: p\n    widgets:\n      - {type: sprocket}\n".utf8).write(to: scene)
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--scene", scene.path, "--frames", "5"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("bad.yaml:4:") && r.stderr.contains("sprocket"), r.stderr)
    }

    func testEditingTheSceneFileReloadsItAndABadEditKeepsTheScene() throws {
        let dir = try KioskdProcess.scratchDirectory("scene-reload")
        let scene = dir.appendingPathComponent("scene.yaml")
        func write(_ text: String) throws {
            try Data("size: display\npages:\n  - name: p\n    widgets:\n      - {id: t, type: text, text: \(text)}\n".utf8)
                .write(to: scene, options: .atomic)
        }
        try write("first")
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240", "--scene", scene.path,
                                           "--log-level", "info"])
        let events = try ControlEventStream(daemon, events: ["scene", "error"])
        func shownText() -> String? { (try? daemon.result("widget.get", #"{"id": "t"}"#))?["text"] as? String }
        try write("second")
        // The start-up load may announce itself too: wait for the load that shows the edit.
        try events.waitFor("the edited scene loaded") { event in
            event.name == "scene" && event.string("kind") == "loaded" && event.string("source") == scene.path && shownText() == "second"
        }
        try Data("pages: [".utf8).write(to: scene)
        let invalid = try events.waitFor("an 'error' event for the bad edit") { $0.name == "error" }
        XCTAssertEqual(invalid.string("code"), "invalid_scene", "\(invalid)")
        XCTAssertEqual(shownText(), "second", "the previous scene stays")
        try events.discardEarlierEvents()
        daemon.process.signal(SIGHUP)
        // The file is still bad: SIGHUP's reload is refused the same way.
        XCTAssertEqual(try events.waitFor("an 'error' event for SIGHUP's reload") { $0.name == "error" }.string("code"), "invalid_scene")
        let r = daemon.stop()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("scene \(scene.path) reloaded"), "a valid edit is picked up by inotify: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("scene \(scene.path) not reloaded, the previous scene stays"), r.stderr)
        XCTAssertTrue(r.stderr.contains("SIGHUP: reloading the scene file"), r.stderr)
    }
}
