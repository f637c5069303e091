import Foundation
import KioskTestSupport
import XCTest

/// A configuration kioskd cannot use (its config file, the board file, the MQTT password file) under keep-going:
/// the diagnostic page names the file, the line and the problem, kioskd keeps running, and a reload (SIGHUP) once
/// the file is fixed starts it over with the configuration read again, in the same process. Without keep-going
/// such a file still ends the run with its errors on stderr.
final class ConfigurationDiagnosticTests: XCTestCase {
    private var directory: URL!
    private var config: URL { directory.appendingPathComponent("kioskd.yaml") }
    private var sceneFile: URL { directory.appendingPathComponent("scene.yaml") }
    private let background: UInt32 = 0x3a0d0d
    private let goodScene = "widgets:\n  - {id: hello, type: text, text: Fine, x: 10, y: 10}\n"

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("config-diagnostic-\(name.filter(\.isLetter))")
        try goodScene.write(to: sceneFile, atomically: true, encoding: .utf8)
    }

    private func write(_ text: String, to file: URL) throws {
        try text.write(to: file, atomically: true, encoding: .utf8)
    }

    /// The diagnostic page's data keys, once its background is on screen.
    private func waitForDiagnosticPage(_ daemon: ControlledKioskd) throws -> [String: String] {
        try Poll.until("the diagnostic page on screen", timeout: 30, interval: 0.05) {
            let result = try daemon.result("screenshot")
            let data = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(result["png_base64"] as? String)))
            let file = directory.appendingPathComponent("shot-\(UUID().uuidString).png")
            try data.write(to: file)
            return try PNGFile(contentsOf: file).rgb(x: 2, y: 2) == background
        }
        return try XCTUnwrap(try daemon.result("data.get")["values"] as? [String: String])
    }

    /// After SIGHUP kioskd starts over: its socket goes away for a moment, then the fixed configuration's scene
    /// answers. The same process throughout.
    private func reloadAndWaitForTheScene(_ daemon: ControlledKioskd, notify: NotifySocket) throws {
        let pid = daemon.pid
        daemon.process.signal(SIGHUP)
        _ = try notify.waitFor("RELOADING=1") { $0.contains("RELOADING=1") }
        try Poll.until("the fixed configuration's scene", timeout: 60, interval: 0.05) {
            XCTAssertTrue(daemon.isRunning, "kioskd ended while starting over")
            guard daemon.isRunning else { return true }
            guard let reply = try? daemon.request(#"{"id": 1, "cmd": "widget.get", "args": {"id": "hello"}}"#) else { return false }
            return (reply["result"] as? [String: Any])?["text"] as? String == "Fine"
        }
        XCTAssertEqual(daemon.pid, pid)
        XCTAssertTrue(daemon.isRunning, "the same process runs on")
        let ready = try notify.waitFor("READY=1 for the scene") { $0.contains("READY=1") && $0.contains("STATUS=scene \(self.sceneFile.path)") }
        XCTAssertFalse(ready.contains("diagnostic page"), ready)
    }

    /// An unknown key, a bad value and broken YAML: each one's page names the file, the line and the problem, and
    /// fixing the file and reloading shows the scene the file names.
    func testConfigFileErrorsShowThePageUntilFixedAndReloaded() throws {
        let cases: [(text: String, problem: String)] = [
            ("scene: scene.yaml\nbufers: 2\n", "\(config.path):2:1: bufers: unknown key 'bufers'; did you mean 'buffers'?"),
            ("scene: scene.yaml\nrotation: 45\n", "\(config.path):2:11: rotation: expected one of 0, 90, 180, 270"),
            ("scene: scene.yaml\ncontrol: {socket: [\n", "\(config.path):"),
        ]
        for (text, expected) in cases {
            try write(text, to: config)
            let notify = try NotifySocket()
            let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--config", config.path, "--keep-going"],
                                              environment: ["NOTIFY_SOCKET": notify.path])
            let values = try waitForDiagnosticPage(daemon)
            XCTAssertEqual(values["file_label"], "Config file", text)
            XCTAssertEqual(values["file"], config.path, text)
            XCTAssertTrue((values["problem"] ?? "").hasPrefix(expected), "\(text): \(values["problem"] ?? "")")
            XCTAssertTrue((values["hint"] ?? "").contains("reload"), values["hint"] ?? "")
            let ready = try notify.waitFor("READY=1 with the page") { $0.contains("READY=1") }
            XCTAssertTrue(ready.contains("STATUS=diagnostic page: config file \(config.path) cannot be used"), ready)

            try write("scene: scene.yaml\nbuffers: 2\n", to: config)
            try reloadAndWaitForTheScene(daemon, notify: notify)
            let result = daemon.stop()
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("config file \(config.path) cannot be used; showing the diagnostic page"), result.stderr)
        }
    }

    /// A board file the config file names, with the config file's own `keep_going: true` (no option given).
    func testBoardFileErrorShowsThePageUntilFixedAndReloaded() throws {
        let board = directory.appendingPathComponent("board.yaml")
        try write("board: panel\nrotaton: 90\n", to: board)
        try write("scene: scene.yaml\nboard: board.yaml\nkeep_going: true\n", to: config)
        let notify = try NotifySocket()
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--config", config.path],
                                          environment: ["NOTIFY_SOCKET": notify.path])
        let values = try waitForDiagnosticPage(daemon)
        XCTAssertEqual(values["file_label"], "Board file")
        XCTAssertEqual(values["file"], board.path)
        XCTAssertEqual(values["problem"], "\(board.path):2:1: rotaton: unknown key 'rotaton'; did you mean 'rotation'?")

        try write("board: panel\nrotation: 0\n", to: board)
        try reloadAndWaitForTheScene(daemon, notify: notify)
        XCTAssertTrue(daemon.stop().stderr.contains("board panel ("), "the fixed board file was read at the new start")
    }

    /// A password file that cannot be read: the page names the config file's line that names it, and the errno.
    func testUnreadablePasswordFileShowsThePageUntilFixedAndReloaded() throws {
        let password = directory.appendingPathComponent("mqtt.password")
        try? FileManager.default.removeItem(at: password)
        try write("scene: scene.yaml\nmqtt:\n  url: mqtt://127.0.0.1:1\n  username: kiosk\n  password_file: mqtt.password\n", to: config)
        let notify = try NotifySocket()
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--config", config.path, "--keep-going"],
                                          environment: ["NOTIFY_SOCKET": notify.path])
        let values = try waitForDiagnosticPage(daemon)
        XCTAssertEqual(values["file_label"], "MQTT password file")
        XCTAssertEqual(values["file"], password.path)
        XCTAssertEqual(values["problem"], "\(config.path):5:18: mqtt.password_file: \(password.path): cannot read it: ENOENT (No such file or directory)")

        try write("s3cret\n", to: password)
        try reloadAndWaitForTheScene(daemon, notify: notify)
        daemon.stop()
    }

    /// Without keep-going, as before: kioskd exits non-zero with the problem on stderr.
    func testWithoutKeepGoingTheRunFails() throws {
        try write("scene: scene.yaml\nmqtt:\n  url: mqtt://127.0.0.1:1\n  username: kiosk\n  password_file: /nonexistent/mqtt.password\n", to: config)
        let password = try KioskdProcess.run(["run", "--backend", "headless", "--socket", "none", "--frames", "1", "--config", config.path])
        XCTAssertEqual(password.status, 1)
        XCTAssertTrue(password.stderr.contains("\(config.path):5:18: mqtt.password_file: /nonexistent/mqtt.password: cannot read it: ENOENT"),
                      password.stderr)

        // keep_going: false in the config file, and no option: a board error ends the run.
        try write("board: panel\nrotaton: 90\n", to: directory.appendingPathComponent("board.yaml"))
        try write("scene: scene.yaml\nboard: board.yaml\nkeep_going: false\n", to: config)
        let board = try KioskdProcess.run(["run", "--backend", "headless", "--socket", "none", "--frames", "1", "--config", config.path])
        XCTAssertEqual(board.status, 1)
        XCTAssertTrue(board.stderr.contains("board.yaml:2:1: rotaton: unknown key 'rotaton'"), board.stderr)
    }
}
