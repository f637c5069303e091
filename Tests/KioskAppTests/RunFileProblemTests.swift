import Foundation
@testable import KioskApp
import KioskCore
import KioskScene
import KioskTestSupport
import XCTest

/// A file a run reads before it starts (its config file, the board file, the MQTT password file) that cannot be used:
/// under keep-going the kiosk shows the diagnostic page naming the file, the line and the problem, and the file read
/// again once fixed gives a configuration with no problem; without keep-going the run fails with the file's errors.
/// In process: `ResolvedRun.read` and a kiosk built from what it read. (`KioskdTests.ConfigurationDiagnosticTests`
/// keeps the daemon's part: SIGHUP starting the same process over with the fixed file.)
final class RunFileProblemTests: XCTestCase {
    private var directory: URL!
    private var config: String { directory.appendingPathComponent("kioskd.yaml").path }

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("run-file-problem-\(name.filter(\.isLetter))")
        try "widgets:\n  - {id: hello, type: text, text: Fine, x: 10, y: 10}\n"
            .write(to: directory.appendingPathComponent("scene.yaml"), atomically: true, encoding: .utf8)
    }

    private func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// The command line of `kioskd run --backend headless --mode 320x240@60 --config FILE [--keep-going]`.
    private func commandLine(keepGoing: Bool?) -> KioskConfig {
        var commandLine = KioskConfig()
        commandLine.backend = .headless
        commandLine.mode = ModeRequest(width: 320, height: 240, refreshHz: 60)
        commandLine.keepGoing = keepGoing
        return commandLine
    }

    /// The diagnostic page's data keys on a kiosk built from what `read` gave, once its page is laid out.
    private func diagnosticPage(keepGoing: Bool?) throws -> [String: String] {
        let harness = try KioskHarness(name) { run, _ in
            let socket = run.configuration.settings.control.socket
            run = try ResolvedRun.read(commandLine: commandLine(keepGoing: keepGoing), configPath: config)
            run.configuration.settings.control.socket = socket
        }
        let keys = ["file_label", "file", "problem", "hint"]
        try harness.waitUntil("the diagnostic page laid out") { !(harness.first.stage.data(keys: keys)["file"] ?? "").isEmpty }
        return harness.first.stage.data(keys: keys)
    }

    /// An unknown key, a bad value and broken YAML: each one's page names the file, the line and the problem, and
    /// the fixed file is read with no problem.
    func testConfigFileErrorsShowThePageAndTheFixedFileReadsClean() throws {
        let cases: [(text: String, problem: String)] = [
            ("scene: scene.yaml\nbufers: 2\n", "\(config):2:1: bufers: unknown key 'bufers'; did you mean 'buffers'?"),
            ("scene: scene.yaml\nrotation: 45\n", "\(config):2:11: rotation: expected one of 0, 90, 180, 270"),
            ("scene: scene.yaml\ncontrol: {socket: [\n", "\(config):"),
        ]
        for (text, expected) in cases {
            try write(text, to: config)
            let problem = try XCTUnwrap(try ResolvedRun.read(commandLine: commandLine(keepGoing: true), configPath: config).problem, text)
            XCTAssertEqual("\(problem)", "config file \(config) cannot be used", text)
            let values = try diagnosticPage(keepGoing: true)
            XCTAssertEqual(values["file_label"], "Config file", text)
            XCTAssertEqual(values["file"], config, text)
            XCTAssertTrue((values["problem"] ?? "").hasPrefix(expected), "\(text): \(values["problem"] ?? "")")
            XCTAssertTrue((values["hint"] ?? "").contains("reload"), values["hint"] ?? "")

            try write("scene: scene.yaml\nbuffers: 2\n", to: config)
            let fixed = try ResolvedRun.read(commandLine: commandLine(keepGoing: true), configPath: config)
            XCTAssertNil(fixed.problem, text)
            XCTAssertEqual(fixed.configuration.settings.buffers, 2)
        }
    }

    /// A board file the config file names, with the config file's own `keep_going: true` (no option given).
    func testABoardFileErrorShowsThePageUnderTheConfigFilesKeepGoing() throws {
        let board = directory.appendingPathComponent("board.yaml").path
        try write("board: panel\nrotaton: 90\n", to: board)
        try write("scene: scene.yaml\nboard: board.yaml\nkeep_going: true\n", to: config)
        let values = try diagnosticPage(keepGoing: nil)
        XCTAssertEqual(values["file_label"], "Board file")
        XCTAssertEqual(values["file"], board)
        XCTAssertEqual(values["problem"], "\(board):2:1: rotaton: unknown key 'rotaton'; did you mean 'rotation'?")

        try write("board: panel\nrotation: 0\n", to: board)
        let fixed = try ResolvedRun.read(commandLine: commandLine(keepGoing: nil), configPath: config)
        XCTAssertNil(fixed.problem)
        XCTAssertEqual(fixed.configuration.boardName, "panel", "the fixed board file is read")
    }

    /// A password file that cannot be read: the page names the config file's line that names it, and the errno.
    func testAnUnreadablePasswordFileShowsThePage() throws {
        let password = directory.appendingPathComponent("mqtt.password").path
        try? FileManager.default.removeItem(atPath: password)
        try write("scene: scene.yaml\nmqtt:\n  url: mqtt://127.0.0.1:1\n  username: kiosk\n  password_file: mqtt.password\n", to: config)
        let values = try diagnosticPage(keepGoing: true)
        XCTAssertEqual(values["file_label"], "MQTT password file")
        XCTAssertEqual(values["file"], password)
        XCTAssertEqual(values["problem"], "\(config):5:18: mqtt.password_file: \(password): cannot read it: ENOENT (No such file or directory)")

        try write("s3cret\n", to: password)
        let fixed = try ResolvedRun.read(commandLine: commandLine(keepGoing: true), configPath: config)
        XCTAssertNil(fixed.problem)
        XCTAssertEqual(fixed.fleet?.password, "s3cret")
    }

    /// Without keep-going the run fails with the problem: a password file, and a board error under the config
    /// file's `keep_going: false`.
    func testWithoutKeepGoingTheRunFails() throws {
        try write("scene: scene.yaml\nmqtt:\n  url: mqtt://127.0.0.1:1\n  username: kiosk\n  password_file: /nonexistent/mqtt.password\n", to: config)
        XCTAssertThrowsError(try ResolvedRun.read(commandLine: commandLine(keepGoing: nil), configPath: config)) { error in
            XCTAssertTrue("\(error)".contains("\(config):5:18: mqtt.password_file: /nonexistent/mqtt.password: cannot read it: ENOENT"), "\(error)")
            XCTAssertEqual((error as? RunFileError)?.isConfigFile, false)
        }
        try write("board: panel\nrotaton: 90\n", to: directory.appendingPathComponent("board.yaml").path)
        try write("scene: scene.yaml\nboard: board.yaml\nkeep_going: false\n", to: config)
        XCTAssertThrowsError(try ResolvedRun.read(commandLine: commandLine(keepGoing: nil), configPath: config)) { error in
            XCTAssertTrue("\(error)".contains("board.yaml:2:1: rotaton: unknown key 'rotaton'"), "\(error)")
        }
        // The config file's own errors, one located line each, when it is the file that cannot be used.
        try write("scene: scene.yaml\nbufers: 2\n", to: config)
        XCTAssertThrowsError(try ResolvedRun.read(commandLine: commandLine(keepGoing: nil), configPath: config)) { error in
            XCTAssertEqual((error as? RunFileError)?.lines, ["\(config):2:1: bufers: unknown key 'bufers'; did you mean 'buffers'?"])
            XCTAssertEqual((error as? RunFileError)?.isConfigFile, true)
        }
    }

    /// `clock` and `reference` are no built-in pictures: like any other name they are scene files, and a missing one
    /// named on the command line (so without keep-going) fails the run with an error naming its path.
    func testAMissingSceneFileNamedOnTheCommandLineFailsNamingItsPath() throws {
        for name in ["clock", "reference"] {
            XCTAssertThrowsError(try KioskHarness.reading("missing-scene", configPath: nil) { $0.scene = name }, name) { error in
                XCTAssertTrue("\(error)".contains("\(name):1:1: scene file not found"), "\(error)")
            }
        }
    }

    /// Keep-going is on unless the command line names the scene: a kiosk never goes black, a person at a terminal
    /// hears of a bad scene.
    func testKeepGoingIsOnUnlessTheCommandLineNamesTheScene() throws {
        try write("scene: scene.yaml\n", to: config)
        XCTAssertEqual(try ResolvedRun.read(commandLine: commandLine(keepGoing: nil), configPath: config).configuration.settings.keepGoing, true)
        var named = commandLine(keepGoing: nil)
        named.scene = directory.appendingPathComponent("scene.yaml").path
        XCTAssertEqual(try ResolvedRun.read(commandLine: named, configPath: config).configuration.settings.keepGoing, false)
        named.keepGoing = true
        XCTAssertEqual(try ResolvedRun.read(commandLine: named, configPath: config).configuration.settings.keepGoing, true)
    }
}
