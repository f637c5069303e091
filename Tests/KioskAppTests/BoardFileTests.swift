import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskScene
import KioskTestSupport
import XCTest

/// Board files: every shipped one loads and runs; their settings sit below the command line's
/// (`KioskConfiguration.resolve`), and a kiosk built from them shows it; a bad one fails with one line naming file,
/// line, column and key. In process, on the headless backend. (`--rotation 45` refused by the command line's parser
/// is `KioskdTests.KioskdHeadlessCLITests`'.)
final class BoardFileTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private func shipped(_ name: String) -> String {
        repository.appendingPathComponent("board-configs/\(name)").path
    }

    /// A kiosk of `kioskd run --backend headless --board FILE` and the options `change` gives.
    private func kiosk(board: String, _ change: @escaping (inout KioskConfig) -> Void = { _ in }) throws -> KioskHarness {
        try KioskHarness.reading("board", configPath: nil, mode: nil) { commandLine in
            commandLine.board = board
            change(&commandLine)
        }
    }

    private func displayInfo(_ harness: KioskHarness) throws -> JSONValue {
        try XCTUnwrap(try harness.call("display.info").result)
    }

    func testEveryShippedBoardFileLoadsAndRuns() throws {
        let dir = repository.appendingPathComponent("board-configs")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 4, "\(files)")
        for file in files {
            let board = try BoardConfig.load(path: dir.appendingPathComponent(file).path)
            XCTAssertNotNil(board.name, file)
            // The bundled dashboard, as `kioskd run --board FILE` shows without a scene: its ticker flips every frame.
            let harness = try kiosk(board: dir.appendingPathComponent(file).path) { $0.scene = "default" }
            try harness.waitUntil("\(file): two frames flipped") { (try harness.call("stats").result?["frames_flipped"]?.intValue ?? 0) >= 2 }
            XCTAssertEqual(harness.kiosk.configuration.boardName, board.name, file)
        }
    }

    func testBoardModeIsUsedAndOptionsOverrideIt() throws {
        let path = shipped("raspberry-pi-7inch-dsi.yaml")
        let board = try BoardConfig.load(path: path)
        let fromBoard = KioskConfiguration.resolve(commandLine: KioskConfig(), boardFile: board)
        XCTAssertEqual(fromBoard.settings.mode, ModeRequest(width: 800, height: 480, refreshHz: nil))
        XCTAssertEqual(fromBoard.buffers, 2)
        var commandLine = KioskConfig()
        commandLine.mode = ModeRequest(width: 640, height: 480, refreshHz: nil)
        commandLine.buffers = 3
        let overridden = KioskConfiguration.resolve(commandLine: commandLine, boardFile: board)
        XCTAssertEqual(overridden.settings.mode, ModeRequest(width: 640, height: 480, refreshHz: nil))
        XCTAssertEqual(overridden.buffers, 3)

        var harness: KioskHarness? = try kiosk(board: path)
        XCTAssertEqual(try displayInfo(harness!)["mode"]?["name"], "800x480@60")
        XCTAssertEqual(try displayInfo(harness!)["connector"], "DSI-1", "the board's connector")
        harness = nil
        harness = try kiosk(board: path) {
            $0.mode = ModeRequest(width: 640, height: 480, refreshHz: nil)
            $0.buffers = 3
        }
        XCTAssertEqual(try displayInfo(harness!)["mode"]?["name"], "640x480@60")
        XCTAssertEqual(try displayInfo(harness!)["buffers"], 3)
    }

    func testRotationComesFromTheBoardFileAndTheOptionOverridesIt() throws {
        let path = shipped("portrait-hdmi.yaml")
        let board = try BoardConfig.load(path: path)
        XCTAssertEqual(KioskConfiguration.resolve(commandLine: KioskConfig(), boardFile: board).rotation, .degrees90)
        var commandLine = KioskConfig()
        commandLine.rotation = .degrees180
        XCTAssertEqual(KioskConfiguration.resolve(commandLine: commandLine, boardFile: board).rotation, .degrees180)

        var harness: KioskHarness? = try kiosk(board: path)
        let info = try displayInfo(harness!)
        XCTAssertEqual(info["rotation"], 90)
        XCTAssertEqual(info["power"], "on")
        XCTAssertEqual(info["mode"]?["name"], "1920x1080@60", "the mode stays the panel's; only the scene turns")
        let shot = try XCTUnwrap(try harness!.call("screenshot").result)
        XCTAssertEqual(shot["width"], 1920, "the screenshot is of the panel")
        XCTAssertEqual(shot["height"], 1080)
        let png = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(shot["png_base64"]?.stringValue)))
        // IHDR: width and height, big-endian, at bytes 16 and 20.
        XCTAssertEqual(png[16..<20].reduce(0) { $0 << 8 | Int($1) }, 1920)
        XCTAssertEqual(png[20..<24].reduce(0) { $0 << 8 | Int($1) }, 1080)
        harness = nil
        harness = try kiosk(board: path) { $0.rotation = .degrees180 }
        XCTAssertEqual(try displayInfo(harness!)["rotation"], 180)
    }

    /// Board files are read with the scene files' machinery: `FILE:LINE:COL: KEY: message`, with a suggestion
    /// for a misspelt key or value; the run fails with that one line.
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
            let file = dir.appendingPathComponent("bad\(i).yaml").path
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let lines = try runFailure(board: file)
            XCTAssertEqual(lines.count, 1, "\(text): \(lines)")
            XCTAssertTrue(lines.first?.hasPrefix(file + needle) == true, "\(text): expected \(file)\(needle) in \(lines)")
        }
        XCTAssertEqual(try runFailure(board: "/nonexistent/board.yaml").first?.hasPrefix("board file /nonexistent/board.yaml: cannot read it"), true)
        // A FIFO or /dev/zero given by mistake is refused unread, not waited on or read without end.
        let special = try SpecialFiles("board")
        for (path, kind) in [(special.fifo, "a FIFO"), ("/dev/zero", "a character device")] {
            let lines = try XCTUnwrap(returnsPromptly { (try? Self.runFailureLines(board: path)) ?? [] }, "\(path) was waited on")
            XCTAssertEqual(lines, ["board file \(path): cannot read it (is \(kind), not a regular file)"])
        }
    }

    /// The lines a run given `--board FILE` fails with before it starts (`ResolvedRun.read`, as `kioskd run` reads).
    private func runFailure(board: String) throws -> [String] {
        try Self.runFailureLines(board: board)
    }

    private static func runFailureLines(board: String) throws -> [String] {
        var commandLine = KioskConfig()
        commandLine.backend = .headless
        commandLine.board = board
        do {
            _ = try ResolvedRun.read(commandLine: commandLine, configPath: nil)
        } catch let error as RunFileError {
            XCTAssertFalse(error.isConfigFile)
            return error.lines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        }
        throw ControlTestError("board \(board): the run did not fail")
    }
}
