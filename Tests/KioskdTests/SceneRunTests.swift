import Foundation
import KioskTestSupport
import XCTest

/// `kioskd run --scene` as a command: a scene file shown without a display and written out by `--screenshot` and
/// `--stats-out`, and a bad scene ending the run with its location. The scene file's rules in a running kiosk (the
/// default scene, reload on edit and on SIGHUP, the diagnostic page) are tested in process by
/// `KioskAppTests.SceneFileTests` and `KioskAppTests.DiagnosticPageTests`.
final class SceneRunTests: XCTestCase {
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

    func testAnInvalidSceneFileStopsWithItsLocation() throws {
        let dir = try KioskdProcess.scratchDirectory("scene-invalid")
        let scene = dir.appendingPathComponent("bad.yaml")
        try Data("pages:\n  - name: p\n    widgets:\n      - {type: sprocket}\n".utf8).write(to: scene)
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--scene", scene.path, "--frames", "5"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("bad.yaml:4:") && r.stderr.contains("sprocket"), r.stderr)
    }

    /// At a terminal, a bad `--scene` still fails at once, naming the problem: keep-going is off when the command
    /// line names the scene.
    func testInvalidSceneOnTheCommandLineExitsWithoutKeepGoing() throws {
        let dir = try KioskdProcess.scratchDirectory("scene-invalid-syntax")
        let scene = dir.appendingPathComponent("scene.yaml")
        try "pages: [1\n".write(to: scene, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["run", "--backend", "headless", "--mode", "320x240@60", "--socket", "none",
                                            "--scene", scene.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("\(scene.path):"), result.stderr)
    }
}
