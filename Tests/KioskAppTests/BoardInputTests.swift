import Foundation
@testable import KioskApp
import KioskCore
import KioskInput
import KioskScene
import KioskTestSupport
import XCTest

/// A board file's `input:` section: the panel's touch calibration and its per-device map, below the config file
/// and the command line, with located errors like every other board key. In process: a kiosk built from the files
/// as `kioskd run` reads them, its `stats` showing what its input uses.
final class BoardInputTests: XCTestCase {
    private func input(_ harness: KioskHarness) throws -> [String: Any] {
        let client = try harness.connect()
        let reply = try client.request(#"{"id": 1, "cmd": "stats"}"#)
        return try XCTUnwrap((reply["result"] as? [String: Any])?["input"] as? [String: Any], "\(reply)")
    }

    func testTheBoardFilesCalibrationAndMapApplyUnlessTheConfigOrACommandLineOptionGivesOne() throws {
        let dir = try KioskdProcess.scratchDirectory("board-input")
        let board = dir.appendingPathComponent("board.yaml")
        try """
            board: swapped panel
            input:
              calibration: [0, 1, 0, 1, 0, 0]
              map:
                - {device: "*ft5406*", calibration: [-1, 0, 1, 0, 1, 0]}

            """.write(to: board, atomically: true, encoding: .utf8)
        var harness: KioskHarness? = try KioskHarness.reading("board-input", configPath: nil) { $0.board = board.path }
        var shown = try input(harness!)
        XCTAssertEqual(shown["calibration"] as? [Double], [0, 1, 0, 1, 0, 0], "\(shown)")
        let map = try XCTUnwrap(shown["map"] as? [[String: Any]])
        XCTAssertEqual(map.count, 1)
        XCTAssertEqual(map.first?["device"] as? String, "*ft5406*")
        XCTAssertEqual(map.first?["calibration"] as? [Double], [-1, 0, 1, 0, 1, 0])
        let cursor = try XCTUnwrap(shown["cursor"] as? [String: Any])
        XCTAssertEqual(cursor["path"] as? String, "composited", "the headless backend has no cursor plane")
        XCTAssertTrue(cursor["plane"] is NSNull)
        harness = nil

        // The config file's calibration wins over the board's; its map entries come first.
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            board: board.yaml
            input:
              calibration: [1, 0, 0, 0, 1, 0]
              map:
                - {device: "*Touch*", output: HDMI-A-1}

            """.write(to: config, atomically: true, encoding: .utf8)
        harness = try KioskHarness.reading("board-input-config", configPath: config.path)
        shown = try input(harness!)
        XCTAssertEqual(shown["calibration"] as? [Double], [1, 0, 0, 0, 1, 0], "\(shown)")
        XCTAssertEqual((shown["map"] as? [[String: Any]])?.compactMap { $0["device"] as? String }, ["*Touch*", "*ft5406*"])
        harness = nil

        let option = try CalibrationMatrix(parsing: "1,0,0.1,0,1,0")
        harness = try KioskHarness.reading("board-input-option", configPath: config.path) { $0.input.calibration = option }
        XCTAssertEqual(try input(harness!)["calibration"] as? [Double], [1, 0, 0.1, 0, 1, 0], "the option wins")
    }

    func testABadInputSectionGivesOneLocatedLine() throws {
        let cases: [(String, String)] = [
            ("input:\n  calibration: [1, 0, 0, 0, 1]\n", ":2:16: input.calibration: a calibration matrix has 6 values [a, b, c, d, e, f], got 5"),
            ("input:\n  calibrate: [1, 0, 0, 0, 1, 0]\n", ":2:3: input.calibrate: unknown key 'calibrate'; known keys: calibration, map"),
            ("input:\n  map: [{device: \"*Touch*\"}]\n", ":2:9: input.map[0]: an entry needs 'output' or 'calibration' (or both)"),
            ("input:\n  map:\n    - {calibration: [0, 1, 0, 1, 0, 0]}\n", ":3:7: input.map[0]: an entry needs 'device'"),
            ("input:\n  seat: seat1\n", ":2:3: input.seat: unknown key 'seat'; known keys: calibration, map"),
            ("input: [1, 2]\n", ":1:8: input: expected a mapping (calibration"),
        ]
        for (text, needle) in cases {
            XCTAssertThrowsError(try BoardConfig.parse(text, file: "board.yaml"), text) { error in
                let lines = "\(error)".split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "\(text): \(error)")
                XCTAssertTrue(lines.first?.hasPrefix("board.yaml" + needle) == true, "\(text): expected board.yaml\(needle) in \(error)")
            }
        }
    }
}
