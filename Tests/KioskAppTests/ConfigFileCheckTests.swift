import Foundation
@testable import KioskApp
import KioskTestSupport
import XCTest

/// `kioskd check-config`'s rule, in process (`ConfigFileCheck`): the config's problems at their locations, the board
/// file it names, `outputs:` entries and the scene files they name; connector names cannot be checked before a run
/// (the cards say which there are), so a valid section passes. `ConfigFileCLITests` runs the command itself.
final class ConfigFileCheckTests: XCTestCase {
    private var directory: URL!
    private var file: URL { directory.appendingPathComponent("kioskd.yaml") }

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("config-file-check")
    }

    private func check(_ text: String) throws -> ConfigFileCheck.Report {
        try text.write(to: file, atomically: true, encoding: .utf8)
        return try ConfigFileCheck.check(path: file.path)
    }

    func testTheConfigsOwnProblemsAreLocated() throws {
        let report = try check("scene: a.yaml\nrenderstrategy: priority\n")
        XCTAssertFalse(report.passed)
        XCTAssertEqual(report.problems, ["\(file.path):2:1: renderstrategy: unknown key 'renderstrategy'; did you mean 'render_strategy'?"])
    }

    func testTheBoardFileItNamesIsChecked() throws {
        let report = try check("board: missing-board.yaml\n")
        XCTAssertEqual(report.problems.count, 1)
        let line = try XCTUnwrap(report.problems.first)
        XCTAssertTrue(line.contains("\(directory.path)/missing-board.yaml") && line.contains("ENOENT"), line)

        try "mode: 800x480\n".write(to: directory.appendingPathComponent("board.yaml"), atomically: true, encoding: .utf8)
        let good = try check("board: board.yaml\n")
        XCTAssertTrue(good.passed, "\(good.problems)")
    }

    func testOutputsEntriesAndTheirSceneFilesAreChecked() throws {
        let bad = try check("outputs:\n  - connector: HDMI-A-1\n    rotation: 45\n  - mode: 800x480\n")
        XCTAssertEqual(bad.problems, [
            "\(file.path):3:15: outputs[0].rotation: expected one of 0, 90, 180, 270 (degrees clockwise)",
            "\(file.path):4:5: outputs[1]: missing 'connector' (the connector's name, as `kioskd devices` shows it)",
        ])

        let good = try check("outputs:\n  - {connector: HDMI-A-1, mode: 1920x1080@60, scene: default}\n")
        XCTAssertEqual(good, ConfigFileCheck.Report())
        XCTAssertTrue(good.passed)

        let missingScene = try check("outputs:\n  - {connector: HDMI-A-1, scene: missing.yaml}\n")
        XCTAssertEqual(missingScene.problems, ["\(directory.path)/missing.yaml:1:1: scene file not found"])

        // A scene by URL is checked by the run that fetches it.
        let remote = try check("scene: https://example.invalid/a.yaml\noutputs:\n  - {connector: HDMI-A-1, scene: \"https://example.invalid/scene.yaml\"}\n")
        XCTAssertTrue(remote.passed, "\(remote.problems)")
    }
}
