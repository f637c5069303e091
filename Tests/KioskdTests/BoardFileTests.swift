import Foundation
import KioskTestSupport
import XCTest

/// Board files: every shipped one loads; a bad one fails with one line naming file, line, column and key.
final class BoardFileTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testEveryShippedBoardFileLoads() throws {
        let dir = repository.appendingPathComponent("board-configs")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 4, "\(files)")
        for file in files {
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--board", dir.appendingPathComponent(file).path,
                                           "--frames", "2"])
            XCTAssertEqual(r.status, 0, "\(file): \(r.stderr)")
        }
    }

    func testBoardModeIsUsedAndOptionsOverrideIt() throws {
        let dir = try KioskdProcess.scratchDirectory("board-override")
        let stats = dir.appendingPathComponent("stats.json")
        let board = repository.appendingPathComponent("board-configs/raspberry-pi-7inch-dsi.yaml").path
        var r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--frames", "2", "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try KioskdProcess.readStats(stats)["mode"] as? String, "800x480@60")
        r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--mode", "640x480", "--buffers", "3",
                                   "--frames", "2", "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["mode"] as? String, "640x480@60")
        XCTAssertEqual(s["buffers"] as? Int, 3)
    }

    func testRotationComesFromTheBoardFileAndTheOptionOverridesIt() throws {
        let dir = try KioskdProcess.scratchDirectory("board-rotation")
        let stats = dir.appendingPathComponent("stats.json")
        let shot = dir.appendingPathComponent("shot.png")
        let board = repository.appendingPathComponent("board-configs/portrait-hdmi.yaml").path
        var r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--frames", "2",
                                       "--stats-out", stats.path, "--screenshot", shot.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        var s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["rotation"] as? Int, 90)
        XCTAssertEqual(s["power"] as? String, "on")
        XCTAssertEqual(s["mode"] as? String, "1920x1080@60", "the mode stays the panel's; only the scene turns")
        let png = try Data(contentsOf: shot)
        // IHDR: width and height, big-endian, at bytes 16 and 20: the screenshot is of the panel.
        XCTAssertEqual(png[16..<20].reduce(0) { $0 << 8 | Int($1) }, 1920)
        XCTAssertEqual(png[20..<24].reduce(0) { $0 << 8 | Int($1) }, 1080)

        r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--rotation", "180", "--frames", "2",
                                   "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["rotation"] as? Int, 180)
    }

    func testInvalidRotationNamesTheOptionAndTheAllowedValues() throws {
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--rotation", "45", "--frames", "1"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--rotation"), r.stderr)
        XCTAssertTrue(r.stderr.contains("0, 90, 180, 270"), r.stderr)
    }

    /// `clock` and `reference` are no built-in pictures: like any other name they are scene files, and a missing
    /// one is an error naming its path.
    func testAMissingSceneFileIsAnErrorNamingItsPath() throws {
        for name in ["clock", "reference"] {
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--scene", name, "--frames", "1"])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("\(name):1:1: scene file not found"), r.stderr)
        }
    }

    /// Board files are read with the scene files' machinery: `FILE:LINE:COL: KEY: message`, with a suggestion
    /// for a misspelt key or value.
    func testBadBoardFilesGiveOneLineWithLocation() throws {
        let dir = try KioskdProcess.scratchDirectory("board-bad")
        let cases: [(String, String)] = [
            ("board: x\nscale: 2\n", ":2:1: scale: unknown key 'scale'; known keys: board, device"),
            ("board: x\nrotaton: 90\n", ":2:1: rotaton: unknown key 'rotaton'; did you mean 'rotation'?"),
            ("board: x\nrotation: 45\n", ":2:11: rotation: '45' is not one of 0, 90, 180, 270"),
            ("mode: huge\n", ":1:7: mode: mode 'huge': no 'x' between width and height"),
            ("buffers: 5\n", ":1:10: buffers: 5 is out of range 2...3"),
            ("commit: atomc\n", ":1:9: commit: 'atomc' is not one of atomic, legacy, auto; did you mean 'atomic'?"),
            ("- a\n- b\n", ":1:1: expected a mapping"),
            ("mode: [1\n", ":2:1: YAML syntax"),
        ]
        for (i, (text, needle)) in cases.enumerated() {
            let file = dir.appendingPathComponent("bad\(i).yaml")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--board", file.path, "--frames", "1"])
            XCTAssertEqual(r.status, 1, "\(text): \(r.stderr)")
            XCTAssertEqual(r.errorLines.count, 1, "\(text): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(needle), "\(text): expected \(needle) in \(r.stderr)")
        }
        let missing = try KioskdProcess.run(["run", "--board", "/nonexistent/board.yaml"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("board file /nonexistent/board.yaml: cannot read it"), missing.stderr)
        // A FIFO or /dev/zero given by mistake is refused unread, not waited on or read without end.
        let special = try SpecialFiles("board")
        for (path, kind) in [(special.fifo, "a FIFO"), ("/dev/zero", "a character device")] {
            let refused = try KioskdProcess.run(["run", "--backend", "headless", "--board", path, "--frames", "1"], timeout: 20)
            XCTAssertEqual(refused.status, 1, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("board file \(path): cannot read it (is \(kind), not a regular file)"), refused.stderr)
        }
    }
}
