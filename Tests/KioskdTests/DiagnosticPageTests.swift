import Foundation
import KioskTestSupport
import XCTest

/// A missing or invalid scene at start shows the diagnostic page instead of a black screen (or an exit), keeps
/// the control socket and the file watch live, and is replaced once the file is fixed.
final class DiagnosticPageTests: XCTestCase {
    private var directory: URL!
    private var sceneFile: URL { directory.appendingPathComponent("scene.yaml") }
    private let background: UInt32 = 0x3a0d0d

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("diagnostic-\(name.filter(\.isLetter))")
    }

    private func screenshot(_ daemon: ControlledKioskd) throws -> PNGFile {
        let result = try daemon.result("screenshot")
        let data = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(result["png_base64"] as? String)))
        let file = directory.appendingPathComponent("shot-\(UUID().uuidString).png")
        try data.write(to: file)
        return try PNGFile(contentsOf: file)
    }

    /// Waits until the screen shows the diagnostic page's background; returns that screenshot.
    private func waitForDiagnosticPage(_ daemon: ControlledKioskd) throws -> PNGFile {
        var shot: PNGFile?
        try Poll.until("the diagnostic page on screen", timeout: 30, interval: 0.05) {
            let png = try screenshot(daemon)
            shot = png
            return png.rgb(x: 2, y: 2) == background
        }
        return try XCTUnwrap(shot)
    }

    private func pageData(_ daemon: ControlledKioskd) throws -> [String: String] {
        try XCTUnwrap(try daemon.result("data.get")["values"] as? [String: String])
    }

    private func assertIsDiagnosticPage(_ png: PNGFile, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(png.rgb(x: png.width - 3, y: png.height - 3), background, "the page's background", file: file, line: line)
        let whiteish = png.countPixels(in: (0, 0, png.width, png.height)) { ($0 >> 16) & 0xff > 0xc0 && ($0 >> 8) & 0xff > 0xc0 }
        XCTAssertGreaterThan(whiteish, 500, "text is drawn on the page", file: file, line: line)
    }

    func testInvalidSceneFromTheConfigShowsTheDiagnosticPageUntilFixed() throws {
        try "pages:\n  - name: p\n    widgets:\n      - {id: x, type: hologram}\n".write(to: sceneFile, atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("kioskd.yaml")
        try "scene: scene.yaml\n".write(to: config, atomically: true, encoding: .utf8)
        let notify = try NotifySocket()
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "640x480@60", "--config", config.path],
                                          environment: ["NOTIFY_SOCKET": notify.path])
        XCTAssertTrue(daemon.isRunning, "an invalid scene from the config file does not end kioskd")
        assertIsDiagnosticPage(try waitForDiagnosticPage(daemon))
        // systemd hears that kioskd is up, showing the page, and what it waits for.
        let ready = try notify.waitFor("READY=1") { $0.contains("READY=1") }
        XCTAssertTrue(ready.contains("STATUS=diagnostic page: scene \(sceneFile.path) cannot be shown, waiting for it to be fixed"), ready)
        // What the page's text widgets show: the template's data keys.
        let values = try pageData(daemon)
        let problem = values["problem"] ?? ""
        XCTAssertTrue(problem.contains("\(sceneFile.path):4:") && problem.contains("hologram"), "FILE:LINE:COL and the problem: \(problem)")
        XCTAssertEqual(values["socket"], daemon.socketPath)
        XCTAssertEqual(values["file"], sceneFile.path)
        XCTAssertEqual(values["file_label"], "Scene file")
        XCTAssertEqual(values["version"], try daemon.result("version")["version"] as? String)

        // Fixing the file replaces the page: the watch was live all along.
        let events = try ControlEventStream(daemon, events: ["scene"])
        try "widgets:\n  - {id: hello, type: text, text: Fixed, x: 10, y: 10}\n".write(to: sceneFile, atomically: true, encoding: .utf8)
        let loaded = try events.waitFor("the fixed scene's 'scene' event") { $0.name == "scene" && $0.string("kind") == "loaded" }
        XCTAssertEqual(loaded.string("source"), sceneFile.path)
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "hello"}"#)["text"] as? String, "Fixed")
        try Poll.until("the scene to replace the diagnostic page", timeout: 30, interval: 0.05) {
            try screenshot(daemon).rgb(x: 2, y: 2) != background
        }
    }

    func testMissingSceneWithKeepGoingShowsThePageAndSceneLoadReplacesIt() throws {
        let missing = directory.appendingPathComponent("absent.yaml").path
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "640x480@60", "--scene", missing, "--keep-going"])
        assertIsDiagnosticPage(try waitForDiagnosticPage(daemon))
        XCTAssertEqual(try pageData(daemon)["problem"], "\(missing):1:1: scene file not found")
        let events = try ControlEventStream(daemon, events: ["scene"])
        try "widgets:\n  - {id: hello, type: text, text: Loaded, x: 10, y: 10}\n".write(to: sceneFile, atomically: true, encoding: .utf8)
        _ = try daemon.result("scene.load", #"{"path": "\#(sceneFile.path)"}"#)
        _ = try events.waitFor("the loaded scene's 'scene' event") { $0.name == "scene" && $0.string("source") == sceneFile.path }
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "hello"}"#)["text"] as? String, "Loaded")
    }

    /// At a terminal, a bad `--scene` still fails at once, naming the problem.
    func testInvalidSceneOnTheCommandLineExitsWithoutKeepGoing() throws {
        try "pages: [1\n".write(to: sceneFile, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["run", "--backend", "headless", "--mode", "320x240@60", "--socket", "none",
                                            "--scene", sceneFile.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("\(sceneFile.path):"), result.stderr)
    }
}
