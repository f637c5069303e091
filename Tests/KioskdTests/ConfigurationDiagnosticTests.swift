import Foundation
import KioskTestSupport
import XCTest

/// A configuration kioskd cannot use under keep-going, as the daemon lives it: the diagnostic page on screen, its
/// status for systemd, and a reload (SIGHUP) once the file is fixed starting kioskd over with the configuration read
/// again, in the same process. Without keep-going such a file ends the run with its errors on stderr and status 1.
/// What each file's page says, and which problems keep-going covers, are tested in process
/// (`KioskAppTests.RunFileProblemTests`).
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

    /// An unknown key: the page names the file, the line and the problem, systemd hears the page is shown, and
    /// fixing the file and reloading shows the scene the file names, in the same process.
    func testAConfigFileErrorShowsThePageUntilFixedAndReloaded() throws {
        try write("scene: scene.yaml\nbufers: 2\n", to: config)
        let notify = try NotifySocket()
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--config", config.path, "--keep-going"],
                                          environment: ["NOTIFY_SOCKET": notify.path])
        let values = try waitForDiagnosticPage(daemon)
        XCTAssertEqual(values["file_label"], "Config file")
        XCTAssertEqual(values["problem"], "\(config.path):2:1: bufers: unknown key 'bufers'; did you mean 'buffers'?")
        let ready = try notify.waitFor("READY=1 with the page") { $0.contains("READY=1") }
        XCTAssertTrue(ready.contains("STATUS=diagnostic page: config file \(config.path) cannot be used"), ready)

        try write("scene: scene.yaml\nbuffers: 2\n", to: config)
        try reloadAndWaitForTheScene(daemon, notify: notify)
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("config file \(config.path) cannot be used; showing the diagnostic page"), result.stderr)
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
