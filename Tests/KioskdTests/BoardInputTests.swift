import Foundation
import KioskTestSupport
import XCTest

/// A board file's `input:` section: the panel's touch calibration and its per-device map, below the config file
/// and the command line, with located errors like every other board key.
final class BoardInputTests: XCTestCase {
    func input(_ daemon: ControlledKioskd) throws -> [String: Any] {
        try XCTUnwrap(try daemon.result("stats")["input"] as? [String: Any])
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
        var daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--board", board.path])
        var shown = try input(daemon)
        XCTAssertEqual(shown["calibration"] as? [Double], [0, 1, 0, 1, 0, 0], "\(shown)")
        let map = try XCTUnwrap(shown["map"] as? [[String: Any]])
        XCTAssertEqual(map.count, 1)
        XCTAssertEqual(map.first?["device"] as? String, "*ft5406*")
        XCTAssertEqual(map.first?["calibration"] as? [Double], [-1, 0, 1, 0, 1, 0])
        let cursor = try XCTUnwrap(shown["cursor"] as? [String: Any])
        XCTAssertEqual(cursor["path"] as? String, "composited", "the headless backend has no cursor plane")
        XCTAssertTrue(cursor["plane"] is NSNull)
        XCTAssertEqual(daemon.stop().status, 0)

        // The config file's calibration wins over the board's; its map entries come first.
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            board: board.yaml
            input:
              calibration: [1, 0, 0, 0, 1, 0]
              map:
                - {device: "*Touch*", output: HDMI-A-1}

            """.write(to: config, atomically: true, encoding: .utf8)
        daemon = try ControlledKioskd(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60"])
        shown = try input(daemon)
        XCTAssertEqual(shown["calibration"] as? [Double], [1, 0, 0, 0, 1, 0], "\(shown)")
        XCTAssertEqual((shown["map"] as? [[String: Any]])?.compactMap { $0["device"] as? String }, ["*Touch*", "*ft5406*"])
        XCTAssertEqual(daemon.stop().status, 0)

        daemon = try ControlledKioskd(["run", "--config", config.path, "--backend", "headless", "--mode", "320x240@60",
                                       "--calibration", "1,0,0.1,0,1,0"])
        XCTAssertEqual(try input(daemon)["calibration"] as? [Double], [1, 0, 0.1, 0, 1, 0], "the option wins")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    func testABadInputSectionGivesOneLocatedLine() throws {
        let dir = try KioskdProcess.scratchDirectory("board-input-bad")
        let cases: [(String, String)] = [
            ("input:\n  calibration: [1, 0, 0, 0, 1]\n", ":2:16: input.calibration: a calibration matrix has 6 values [a, b, c, d, e, f], got 5"),
            ("input:\n  calibrate: [1, 0, 0, 0, 1, 0]\n", ":2:3: input.calibrate: unknown key 'calibrate'; known keys: calibration, map"),
            ("input:\n  map: [{device: \"*Touch*\"}]\n", ":2:9: input.map[0]: an entry needs 'output' or 'calibration' (or both)"),
            ("input:\n  map:\n    - {calibration: [0, 1, 0, 1, 0, 0]}\n", ":3:7: input.map[0]: an entry needs 'device'"),
            ("input:\n  seat: seat1\n", ":2:3: input.seat: unknown key 'seat'; known keys: calibration, map"),
            ("input: [1, 2]\n", ":1:8: input: expected a mapping (calibration"),
        ]
        for (i, (text, needle)) in cases.enumerated() {
            let file = dir.appendingPathComponent("bad\(i).yaml")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--board", file.path, "--frames", "1"])
            XCTAssertEqual(r.status, 1, "\(text): \(r.stderr)")
            XCTAssertEqual(r.errorLines.count, 1, "\(text): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(needle), "\(text): expected \(needle) in \(r.stderr)")
        }
    }
}
