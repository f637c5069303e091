import Foundation
import KioskTestSupport
import XCTest

/// kioskctl's subcommands against a headless kioskd: human output, `--json`, and the documented exit statuses
/// (0 ok, 1 error reply, 2 usage, 3 cannot connect).
final class KioskctlCommandTests: XCTestCase {
    private var daemon: ControlledKioskd!

    override func setUpWithError() throws {
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--screenshot-dir", KioskdProcess.scratchRoot])
    }

    override func tearDownWithError() throws {
        daemon.stop()
        daemon = nil
    }

    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    func testDisplayInfoShowsModesRotationAndPower() throws {
        let human = try daemon.kioskctl(["display-info"])
        XCTAssertEqual(human.status, 0, human.stderr)
        for needle in ["connector: Headless-1", "power: on", "rotation: 0", "modes:", "name: 320x240@60"] {
            XCTAssertTrue(text(human.stdout).contains(needle), "\(needle) in \(text(human.stdout))")
        }
        let raw = try daemon.kioskctl(["display-info", "--json"])
        XCTAssertEqual(raw.status, 0, raw.stderr)
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: raw.stdout) as? [String: Any])
        XCTAssertEqual((reply["result"] as? [String: Any])?["rotation"] as? Int, 0)
    }

    func testScreenshotToAFileToAPipeAndByTheServer() throws {
        let dir = try KioskdProcess.scratchDirectory("kioskctl-screenshot")
        let file = dir.appendingPathComponent("shot.png").path
        let toFile = try daemon.kioskctl(["screenshot", "-o", file])
        XCTAssertEqual(toFile.status, 0, toFile.stderr)
        XCTAssertEqual(text(toFile.stdout), "\(file): 320x240 PNG\n")
        XCTAssertEqual(Array(try Data(contentsOf: URL(fileURLWithPath: file)).prefix(4)), [0x89, 0x50, 0x4E, 0x47])

        let toPipe = try daemon.kioskctl(["screenshot"])
        XCTAssertEqual(toPipe.status, 0, toPipe.stderr)
        XCTAssertEqual(Array(toPipe.stdout.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "the PNG itself on stdout")

        let serverFile = dir.appendingPathComponent("server.png").path
        let byServer = try daemon.kioskctl(["screenshot", "--server-path", serverFile])
        XCTAssertEqual(byServer.status, 0, byServer.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: serverFile))

        let json = try daemon.kioskctl(["screenshot", "--json"])
        XCTAssertEqual(json.status, 0, json.stderr)
        XCTAssertTrue(text(json.stdout).contains(#""png_base64":"iVBORw0K"#), "raw reply")

        let unwritable = try daemon.kioskctl(["screenshot", "--server-path", KioskdProcess.scratchRoot + "/nonexistent-kioskd-dir/x.png"])
        XCTAssertEqual(unwritable.status, 1, "error reply")
        XCTAssertTrue(unwritable.stderr.contains("io_error") && unwritable.stderr.contains("ENOENT"), unwritable.stderr)
    }

    /// A PNG is not written to a terminal: through `script`, kioskctl's stdout is a pseudo-terminal.
    func testScreenshotRefusesATerminal() throws {
        let kioskctl = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl").path
        let output = try runTool("/usr/bin/script", ["-qec", "\(kioskctl) screenshot --socket \(daemon.socketPath)", "/dev/null"])
        XCTAssertEqual(output.status, 2, output.text)
        XCTAssertTrue(output.text.contains("terminal"), output.text)
        XCTAssertFalse(output.text.contains("PNG\r\n"), "no image bytes on the terminal")
    }

    /// A headless output has no writeback connector: `verify` is an error reply naming the output and why, and
    /// `stats` says `verify: unavailable` with the same reason; `corrupt_composed` is refused without the test flag.
    func testVerifyIsUnavailableWithoutWriteback() throws {
        let verify = try daemon.kioskctl(["verify"])
        XCTAssertEqual(verify.status, 1, verify.stderr)
        XCTAssertTrue(verify.stderr.contains("unavailable"), verify.stderr)
        XCTAssertTrue(verify.stderr.contains("output.verify: output auto: scanout verification is unavailable: connector Headless-1: the headless backend has no writeback connector"),
                      verify.stderr)
        let stats = try daemon.result("stats")
        XCTAssertEqual(stats["verify"] as? String, "unavailable")
        XCTAssertEqual(stats["verify_unavailable_reason"] as? String, "connector Headless-1: the headless backend has no writeback connector")
        let byAlias = try daemon.error("display.verify")
        XCTAssertEqual(byAlias.code, "unavailable")
        let hook = try daemon.error("display.verify", #"{"corrupt_composed": true}"#)
        XCTAssertEqual(hook.code, "invalid_argument")
        XCTAssertEqual(hook.message, "display.verify: corrupt_composed: a test hook, accepted only from kioskd run --verify-corrupt-composed")
    }

    func testLogLevelShowsAndSets() throws {
        let set = try daemon.kioskctl(["log-level", "debug"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertEqual(text(set.stdout), "debug\n")
        let shown = try daemon.kioskctl(["log-level"])
        XCTAssertEqual(text(shown.stdout), "debug\n")
        let bad = try daemon.kioskctl(["log-level", "loud"])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.stderr.contains("invalid_argument"), bad.stderr)
    }

    func testPowerTurnsTheOutputOffAndOnAndNeedsOnOrOff() throws {
        let off = try daemon.kioskctl(["power", "off"])
        XCTAssertEqual(text(off.stdout), "display power: off\n", off.stderr)
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "off")
        XCTAssertEqual(try daemon.kioskctl(["power", "on"]).status, 0)
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "on")
        let bad = try daemon.kioskctl(["power", "dim"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        let none = try daemon.kioskctl(["power"])
        XCTAssertEqual(none.status, 2, none.stderr)
    }

    func testWatchStreamsFrameEventsAndRefusesUnknownNames() throws {
        let process = Process()
        process.executableURL = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl")
        process.arguments = ["watch", "frame", "scene", "data", "error", "--socket", daemon.socketPath]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let deadline = ProcessDeadline(process, seconds: 30)
        let lines = try PipeLineReader(out).waitForLines(6, "frame event lines", timeout: 10) { $0.contains(#""event":"frame""#) }
        process.terminate()
        process.waitUntilExit()
        try deadline.finish("kioskctl watch after SIGTERM")
        let frames = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["event"] as? String == "frame" }
        XCTAssertEqual(frames.count, 6, "each line is one JSON frame event: \(lines.prefix(3))")
        XCTAssertNotNil((frames.first?["data"] as? [String: Any])?["damage_rects"] as? Int)

        let unknown = try daemon.kioskctl(["watch", "vsync"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("vsync"), unknown.stderr)
    }

    /// Usage errors are caught before anything is sent: status 2 and a message naming the problem.
    func testUsageErrorsExitTwo() throws {
        let cases: [([String], String)] = [
            (["widget", "set", "title"], "key=value"),
            (["widget", "set", "title", "novalue"], "key=value"),
            (["data", "set"], "key=value"),
            (["data", "set", "=1"], "key=value"),
            (["scene", "load"], "FILE"),
            (["scene", "load", "a.yaml", "--yaml", "size: display"], "FILE"),
            (["page", "show", "main", "--duration", "1"], "--transition"),
            (["animate", "logo", "opacity"], "target"),
            (["animate", "logo", "x", "1", "--spring", "--decay"], "exclude"),
            (["animate", "logo", "x", "--decay"], "--velocity"),
            (["animate", "logo", "x", "1", "--stiffness", "5"], "--spring"),
            (["animate", "logo", "x", "1", "--spring", "--duration", "1"], "basic"),
            (["animate", "logo", "x", "1", "--duraton", "1"], "'--duraton' is not a number"),
            (["animate", "logo", "x", "--decay", "--velocity", "fast"], "--velocity fast"),
            (["screenshot", "-o", "a.png", "--server-path", "/tmp/b.png"], "not both"),
            (["screenshot", "--server-path", "b.png"], "absolute"),
        ]
        for (arguments, needle) in cases {
            let result = try daemon.kioskctl(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(needle), "\(arguments): expected \(needle) in \(result.stderr)")
        }
    }

    func testSceneSubcommandsReportErrorRepliesWithStatusOne() throws {
        // An error reply is status 1 with the code and message on stderr.
        let result = try daemon.kioskctl(["widget", "get", "no-such-widget"])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertEqual(result.stderr, "kioskctl: not_found: widget.get: no widget with id 'no-such-widget'\n")
    }

    func testHelpDocumentsEveryExitStatusAndSubcommand() throws {
        let help = try daemon.kioskctl(["--help"])
        XCTAssertEqual(help.status, 0)
        let text = text(help.stdout)
        for needle in ["0  the command succeeded", "1  kioskd answered with an error reply", "2  usage error", "3  cannot connect",
                       "power", "screenshot", "scene", "widget", "data", "page", "animate", "watch", "raw", "log-level"] {
            XCTAssertTrue(text.contains(needle), "\(needle) in \(text)")
        }
        let cannotConnect = try daemon.kioskctl(["power", "on", "--socket", daemon.directory + "/absent.sock"])
        XCTAssertEqual(cannotConnect.status, 3, cannotConnect.stderr)
    }
}
