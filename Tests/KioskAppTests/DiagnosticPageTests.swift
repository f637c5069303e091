import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskScene
import KioskTestSupport
import XCTest

/// A missing or invalid scene at start shows the diagnostic page instead of a black screen (or an exit), keeps the
/// control socket and the file watch live, and is replaced once the file is fixed. In process: a kiosk built from
/// what `ResolvedRun.read` made of the command line and the config file, on the real loop, with systemd's notify
/// socket stood in for. (`KioskdTests.SceneRunTests` keeps kioskd's exit for a bad `--scene` without keep-going.)
final class DiagnosticPageTests: XCTestCase {
    private let background: UInt32 = 0x3a0d0d
    private static let invalidScene = "pages:\n  - name: p\n    widgets:\n      - {id: x, type: hologram}\n"

    /// The command line of `kioskd run --backend headless --mode 640x480@60`.
    private func commandLine() -> KioskConfig {
        var commandLine = KioskConfig()
        commandLine.backend = .headless
        commandLine.mode = ModeRequest(width: 640, height: 480, refreshHz: 60)
        return commandLine
    }

    /// Waits until the screen shows the diagnostic page's background; returns that screen.
    private func waitForDiagnosticPage(_ harness: KioskHarness) throws -> Screen {
        let screen = try harness.settledScreen(of: harness.first)
        XCTAssertEqual(screen.rgb(x: 2, y: 2), background, "the diagnostic page's background")
        return screen
    }

    private func assertIsDiagnosticPage(_ screen: Screen, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(screen.rgb(x: screen.width - 3, y: screen.height - 3), background, "the page's background", file: file, line: line)
        let whiteish = screen.countPixels(in: (0, 0, screen.width, screen.height)) { ($0 >> 16) & 0xff > 0xc0 && ($0 >> 8) & 0xff > 0xc0 }
        XCTAssertGreaterThan(whiteish, 500, "text is drawn on the page", file: file, line: line)
    }

    private func pageData(_ harness: KioskHarness) throws -> [String: String] {
        let values = try XCTUnwrap(try harness.call("data.get").result?["values"]?.objectValue)
        return values.compactMapValues(\.stringValue)
    }

    private func text(_ harness: KioskHarness, of id: String) throws -> String? {
        try harness.call("widget.get", ["id": .string(id)]).result?["text"]?.stringValue
    }

    func testInvalidSceneFromTheConfigShowsTheDiagnosticPageUntilFixed() throws {
        let notify = try NotifySocket()
        let harness = try KioskHarness.supervised(by: notify) {
            try KioskHarness(name, scene: Self.invalidScene, manualClock: false) { run, directory in
                let config = directory.appendingPathComponent("kioskd.yaml").path
                try "scene: scene.yaml\n".write(toFile: config, atomically: true, encoding: .utf8)
                let socket = run.configuration.settings.control.socket
                run = try ResolvedRun.read(commandLine: commandLine(), configPath: config)
                run.configuration.settings.control.socket = socket
            }
        }
        let sceneFile = harness.directory.appendingPathComponent("scene.yaml").path
        XCTAssertTrue(harness.first.runner.showsDiagnosticPage, "an invalid scene from the config file does not end the run")
        assertIsDiagnosticPage(try waitForDiagnosticPage(harness))
        // systemd hears that kioskd is up, showing the page, and what it waits for.
        var ready = ""
        try harness.waitUntil("READY=1 on the notify socket") {
            ready = notify.drain().first { $0.contains("READY=1") } ?? ""
            return !ready.isEmpty
        }
        XCTAssertTrue(ready.contains("STATUS=diagnostic page: scene \(sceneFile) cannot be shown, waiting for it to be fixed"), ready)
        // What the page's text widgets show: the template's data keys.
        let values = try pageData(harness)
        let problem = values["problem"] ?? ""
        XCTAssertTrue(problem.contains("\(sceneFile):4:") && problem.contains("hologram"), "FILE:LINE:COL and the problem: \(problem)")
        XCTAssertEqual(values["socket"], harness.socketPath)
        XCTAssertEqual(values["file"], sceneFile)
        XCTAssertEqual(values["file_label"], "Scene file")
        XCTAssertEqual(values["version"], try harness.call("version").result?["version"]?.stringValue)

        // Fixing the file replaces the page: the watch was live all along.
        let events = try harness.subscribe(["scene"])
        try "widgets:\n  - {id: hello, type: text, text: Fixed, x: 10, y: 10}\n".write(toFile: sceneFile, atomically: true, encoding: .utf8)
        let loaded = try events.waitFor("scene") { $0["kind"] as? String == "loaded" }
        XCTAssertEqual(loaded["source"] as? String, sceneFile)
        XCTAssertEqual(try text(harness, of: "hello"), "Fixed")
        XCTAssertFalse(harness.first.runner.showsDiagnosticPage)
        XCTAssertNotEqual(try harness.settledScreen(of: harness.first).rgb(x: 2, y: 2), background, "the scene replaced the diagnostic page")
    }

    func testMissingSceneWithKeepGoingShowsThePageAndSceneLoadReplacesIt() throws {
        let harness = try KioskHarness(name, manualClock: false) { run, directory in
            run.configuration.settings.mode = ModeRequest(width: 640, height: 480, refreshHz: 60)
            run.configuration.settings.scene = directory.appendingPathComponent("absent.yaml").path
            run.configuration.settings.keepGoing = true
        }
        let missing = harness.directory.appendingPathComponent("absent.yaml").path
        assertIsDiagnosticPage(try waitForDiagnosticPage(harness))
        XCTAssertEqual(try pageData(harness)["problem"], "\(missing):1:1: scene file not found")
        let events = try harness.subscribe(["scene"])
        let sceneFile = harness.directory.appendingPathComponent("scene.yaml").path
        try "widgets:\n  - {id: hello, type: text, text: Loaded, x: 10, y: 10}\n".write(toFile: sceneFile, atomically: true, encoding: .utf8)
        let load: [String: JSONValue] = ["path": .string(sceneFile)]
        XCTAssertEqual(try harness.call("scene.load", load).result?["source"]?.stringValue, sceneFile)
        try events.waitFor("scene") { $0["source"] as? String == sceneFile }
        XCTAssertEqual(try text(harness, of: "hello"), "Loaded")
    }
}
