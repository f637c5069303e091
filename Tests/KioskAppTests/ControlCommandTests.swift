import Foundation
@testable import KioskApp
import KioskTestSupport
import XCTest

/// The control commands of a kiosk in process, on its control socket as a client sends them (the real loop and
/// render workers, the bundled dashboard at 320x240, screenshots confined to the scratch folder): each command's
/// reply and each of its error paths. Clients nobody here wrote (Python, socat) talk to `kioskd` itself in
/// KioskdTests' `ControlClientTests`.
final class ControlCommandTests: XCTestCase {
    private var harness: KioskHarness!
    private var client: HarnessClient!

    override func setUpWithError() throws {
        harness = try KioskHarness("control-commands", manualClock: false) { run, _ in
            run.configuration.settings.scene = "default"
            run.configuration.settings.control.screenshotDirectory = KioskdProcess.scratchRoot
        }
        client = try harness.connect()
    }

    override func tearDown() {
        client = nil
        harness = nil
    }

    /// The result of `command` with `arguments` (JSON) on the socket; fails the test on an error reply.
    private func result(_ command: String, _ arguments: String = "{}", file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try client.result(command, arguments, file: file, line: line)
    }

    /// The error of `command` with `arguments` (JSON) on the socket; fails the test on a result.
    private func error(_ command: String, _ arguments: String = "{}", file: StaticString = #filePath, line: UInt = #line) throws -> (code: String?, message: String) {
        try client.error(command, arguments, file: file, line: line)
    }

    private func flipped() throws -> Int {
        try result("stats")["frames_flipped"] as? Int ?? 0
    }

    func testDisplayInfoListsModesRotationAndPower() throws {
        let info = try result("display.info")
        XCTAssertEqual(info["device"] as? String, "headless")
        XCTAssertEqual(info["connector"] as? String, "Headless-1")
        let mode = try XCTUnwrap(info["mode"] as? [String: Any])
        XCTAssertEqual(mode["width"] as? Int, 320)
        XCTAssertEqual(mode["height"] as? Int, 240)
        XCTAssertEqual(mode["name"] as? String, "320x240@60")
        XCTAssertEqual(mode["refresh_mhz"] as? Int, 60_000)
        let modes = try XCTUnwrap(info["modes"] as? [[String: Any]])
        XCTAssertEqual(modes.map { $0["name"] as? String }, ["320x240@60"], "a headless output offers the mode it was given")
        XCTAssertEqual(info["rotation"] as? Int, 0)
        XCTAssertEqual(info["power"] as? String, "on")
        XCTAssertEqual(info["commit_api"] as? String, "headless")
        XCTAssertEqual(info["flip_pacing"] as? String, "vblank", "the headless backend simulates a vblank")
        XCTAssertEqual(info["buffers"] as? Int, 2)
    }

    func testDisplayCommandsTakeTheOutputTheyActOn() throws {
        XCTAssertEqual(try result("display.info", #"{"output": "headless-1"}"#)["connector"] as? String, "Headless-1")
        XCTAssertEqual(try result("display.power", #"{"on": true, "output": "Headless-1"}"#)["power"] as? String, "on")
        XCTAssertEqual(try result("screenshot", #"{"output": "Headless-1"}"#)["width"] as? Int, 320)
        for command in ["display.info", "screenshot"] {
            let unknown = try error(command, #"{"output": "HDMI-A-1"}"#)
            XCTAssertEqual(unknown.code, "not_found", command)
            XCTAssertTrue(unknown.message.contains("no output named 'HDMI-A-1'") && unknown.message.contains("Headless-1"), unknown.message)
        }
        let wrongType = try error("display.info", #"{"output": 1}"#)
        XCTAssertEqual(wrongType.code, "invalid_argument")
        XCTAssertTrue(wrongType.message.contains("'output' must be a string"), wrongType.message)
    }

    func testDisplayPowerNeedsABooleanOn() throws {
        let missing = try error("display.power")
        XCTAssertEqual(missing.code, "invalid_argument")
        XCTAssertTrue(missing.message.contains("missing 'on'"), missing.message)
        for wrong in [#"{"on": "off"}"#, #"{"on": 1}"#, #"{"on": [true]}"#] {
            let error = try error("display.power", wrong)
            XCTAssertEqual(error.code, "invalid_argument", wrong)
            XCTAssertTrue(error.message.contains("'on' must be a boolean"), error.message)
        }
        XCTAssertEqual(try result("display.info")["power"] as? String, "on", "a refused request changes nothing")
    }

    func testScreenshotAsBase64IsAPNGOfTheMode() throws {
        let result = try result("screenshot")
        XCTAssertEqual(result["width"] as? Int, 320)
        XCTAssertEqual(result["height"] as? Int, 240)
        XCTAssertNil(result["path"])
        let png = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(result["png_base64"] as? String)))
        try assertPNG(png, width: 320, height: 240)
    }

    func testScreenshotToAPathWritesThePNGThere() throws {
        let dir = try KioskdProcess.scratchDirectory("control-screenshot")
        let path = dir.appendingPathComponent("shot.png").path
        let result = try result("screenshot", #"{"path": "\#(path)"}"#)
        XCTAssertEqual(result["path"] as? String, path)
        XCTAssertEqual(result["width"] as? Int, 320)
        XCTAssertNil(result["png_base64"])
        try assertPNG(try Data(contentsOf: URL(fileURLWithPath: path)), width: 320, height: 240)
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o640, "the group (kioskd) reads screenshots, others do not")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["shot.png"], "no temporary file is left")
    }

    /// A screenshot that does not fit on its file system (a full 4 KiB tmpfs) leaves nothing under its name, nor a
    /// temporary file: the PNG is written to a temporary name and renamed into place only when whole.
    func testAScreenshotOnAFullFileSystemLeavesNoPartialFile() throws {
        let dir = try KioskdProcess.scratchDirectory("control-screenshot-full").path
        guard mount("tmpfs", dir, "tmpfs", 0, "size=4k") == 0 else {
            throw XCTSkip("cannot mount a 4 KiB tmpfs at \(dir) (errno \(errno)); AtomicFileTests injects the failure instead")
        }
        defer { umount(dir) }
        // Filled to the last block, so that even the PNG of a black frame does not fit.
        try? Data(count: 1 << 16).write(to: URL(fileURLWithPath: dir + "/filler"))
        var space = statvfs()
        XCTAssertEqual(statvfs(dir, &space), 0)
        XCTAssertEqual(space.f_bavail, 0, "the file system is full")
        let path = dir + "/shot.png"
        let error = try error("screenshot", #"{"path": "\#(path)"}"#)
        XCTAssertEqual(error.code, "io_error")
        XCTAssertTrue(error.message.contains(path) && error.message.contains("ENOSPC"), error.message)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["filler"], "neither the name nor a temporary file")
    }

    /// Server-side screenshots go only into the screenshot directory: not elsewhere, not out through `..` or a
    /// symbolic link.
    func testScreenshotWritesOnlyUnderTheScreenshotDirectory() throws {
        let dir = try KioskdProcess.scratchDirectory("control-screenshot-confined")
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outside) }
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("link").path, withDestinationPath: outside.path)
        try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("file-link.png").path,
                                                   withDestinationPath: outside.appendingPathComponent("x.png").path)
        for path in [outside.appendingPathComponent("shot.png").path, KioskdProcess.scratchRoot + "/../escape.png",
                     dir.appendingPathComponent("link/shot.png").path, dir.appendingPathComponent("file-link.png").path,
                     KioskdProcess.scratchRoot, "/etc/passwd"] {
            let error = try error("screenshot", #"{"path": "\#(path)"}"#)
            XCTAssertEqual(error.code, "invalid_argument", path)
            XCTAssertTrue(error.message.contains("inside the screenshot directory \(KioskdProcess.scratchRoot)"), error.message)
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.path), [], "nothing was written outside")
        let inside = dir.appendingPathComponent("./sub/../shot.png").path
        XCTAssertEqual(try result("screenshot", #"{"path": "\#(inside)"}"#)["path"] as? String, dir.appendingPathComponent("shot.png").path)
    }

    func testScreenshotErrorsNameThePathAndErrno() throws {
        let relative = try error("screenshot", #"{"path": "shot.png"}"#)
        XCTAssertEqual(relative.code, "invalid_argument")
        XCTAssertTrue(relative.message.contains("'path' must be an absolute path") && relative.message.contains("shot.png"), relative.message)

        let wrongType = try error("screenshot", #"{"path": 5}"#)
        XCTAssertEqual(wrongType.code, "invalid_argument")
        XCTAssertTrue(wrongType.message.contains("'path' must be a string, got number"), wrongType.message)

        let missingPath = KioskdProcess.scratchRoot + "/nonexistent-kioskd-dir/shot.png"
        let missingDirectory = try error("screenshot", #"{"path": "\#(missingPath)"}"#)
        XCTAssertEqual(missingDirectory.code, "io_error")
        XCTAssertTrue(missingDirectory.message.contains(missingPath) && missingDirectory.message.contains("ENOENT"),
                      missingDirectory.message)

        let folder = try KioskdProcess.scratchDirectory("control-screenshot-folder").path
        let directory = try error("screenshot", #"{"path": "\#(folder)"}"#)
        XCTAssertEqual(directory.code, "io_error")
        XCTAssertTrue(directory.message.contains(folder) && directory.message.contains("Is a directory"), directory.message)
    }

    /// A screenshot is answered later (encoded off the loop); requests sent after it on the same connection are
    /// answered after it, in order, and frames keep flipping meanwhile.
    func testRepliesAfterAScreenshotKeepTheirOrder() throws {
        let flipsBefore = try flipped()
        let socket = try harness.connect()
        var lines = ""
        for n in 0..<6 {
            lines += #"{"id": \#(n * 3), "cmd": "screenshot"}"# + "\n"
            lines += #"{"id": \#(n * 3 + 1), "cmd": "ping"}"# + "\n"
            lines += #"{"id": \#(n * 3 + 2), "cmd": "display.power", "args": {}}"# + "\n"
        }
        try socket.send(lines)
        var ids: [Int] = []
        while ids.count < 18 {
            let reply = try socket.nextReply()
            ids.append(reply["id"] as? Int ?? -1)
            switch (reply["id"] as? Int ?? -1) % 3 {
            case 0: XCTAssertNotNil((reply["result"] as? [String: Any])?["png_base64"] as? String)
            case 1: XCTAssertEqual((reply["result"] as? [String: Any])?["pong"] as? Bool, true)
            default: XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "invalid_argument")
            }
        }
        XCTAssertEqual(ids, Array(0..<18))
        try harness.waitUntil("two more flips") { try flipped() >= flipsBefore + 2 }
    }

    func testFrameAndFlipEventsAfterSubscribe() throws {
        let events = try harness.connect()
        let subscribed = try events.request(#"{"id": 1, "cmd": "subscribe", "args": {"events": ["frame", "flip"]}}"#)
        XCTAssertEqual((subscribed["result"] as? [String: Any])?["events"] as? [String], ["flip", "frame"])
        var frames: [[String: Any]] = [], flips: [[String: Any]] = []
        // The dashboard's ticker changes the screen every frame: five of each come.
        while frames.count < 5 || flips.count < 5 {
            let event = try events.nextEvent()
            if event.name == "frame", frames.count < 5 { frames.append(event.data) }
            if event.name == "flip", flips.count < 5 { flips.append(event.data) }
        }
        // Each flip carries the fingerprint of the frame it put on screen: 16 hex digits, changing with the ticker.
        let fingerprints = flips.compactMap { $0["fingerprint"] as? String }
        XCTAssertEqual(fingerprints.count, 5, "\(flips)")
        XCTAssertTrue(fingerprints.allSatisfy { $0.wholeMatch(of: /[0-9a-f]{16}/) != nil }, "\(fingerprints)")
        XCTAssertGreaterThan(Set(fingerprints).count, 1, "the ticker moves: \(fingerprints)")
        let numbers = frames.compactMap { $0["frame"] as? Int }
        XCTAssertEqual(numbers.count, frames.count)
        XCTAssertEqual(numbers, numbers.sorted())
        XCTAssertEqual(Set(numbers).count, numbers.count, "frame numbers are distinct")
        XCTAssertTrue(frames.allSatisfy { ($0["damage_rects"] as? Int ?? 0) >= 1 }, "\(frames)")
        let stamps = frames.compactMap { $0["timestamp_ns"] as? Int }
        XCTAssertEqual(stamps, stamps.sorted())

        let unsubscribed = try events.request(#"{"id": 2, "cmd": "unsubscribe", "args": {"events": ["frame", "flip"]}}"#)
        XCTAssertEqual((unsubscribed["result"] as? [String: Any])?["events"] as? [String], [])
    }

    func testSubscribeTakesEveryEventNameAndRefusesOthers() throws {
        let all = try result("subscribe", #"{"events": ["frame", "flip", "scene", "data", "error", "display"]}"#)
        XCTAssertEqual(all["events"] as? [String], ["data", "display", "error", "flip", "frame", "scene"])
        let unknown = try error("subscribe", #"{"events": ["flip", "vsync"]}"#)
        XCTAssertEqual(unknown.code, "invalid_argument")
        XCTAssertTrue(unknown.message.contains("'vsync'"), unknown.message)
        let wrongType = try error("subscribe", #"{"events": "flip"}"#)
        XCTAssertEqual(wrongType.code, "invalid_argument")
        XCTAssertTrue(wrongType.message.contains("'events'"), wrongType.message)
        XCTAssertEqual(try error("unsubscribe").code, "invalid_argument")
    }

    func testStatsVersionAndLogLevel() throws {
        try harness.waitUntil("two flips") { try flipped() >= 2 }
        let stats = try result("stats")
        XCTAssertGreaterThan(stats["frames_flipped"] as? Int ?? 0, 0)
        XCTAssertNotNil(stats["frames_composed"] as? Int)
        XCTAssertEqual(stats["control_clients"] as? Int, 1, "the asking client")
        let version = try result("version")
        let commands = try XCTUnwrap(version["commands"] as? [String])
        for name in ["display.info", "display.power", "screenshot", "scene.load", "scene.get", "widget.get", "widget.set",
                     "data.set", "data.get", "page.show", "animate", "subscribe", "unsubscribe", "log.level", "stats", "ping"] {
            XCTAssertTrue(commands.contains(name), name)
        }
        // The level is the process's (every kiosk logger's): set back afterwards for the tests that follow.
        let before = try XCTUnwrap(try result("log.level")["level"] as? String)
        defer { _ = try? result("log.level", #"{"level": "\#(before)"}"#) }
        XCTAssertEqual(try result("log.level", #"{"level": "warning"}"#)["level"] as? String, "warning")
        XCTAssertEqual(try result("log.level")["level"] as? String, "warning")
        let bad = try error("log.level", #"{"level": "loud"}"#)
        XCTAssertEqual(bad.code, "invalid_argument")
        XCTAssertTrue(bad.message.contains("'loud'"), bad.message)
    }

    func testUnknownCommandsAndMalformedLinesKeepTheConnection() throws {
        let socket = try harness.connect()
        let cases: [(String, String)] = [
            (#"{"id": 1, "cmd": "display.rotate"}"#, "unknown_command"),
            (#"{"id": 2, "cmd": "screenshot", "args": [1]}"#, "invalid_request"),
            (#"{"id": 3, "cmd": 7}"#, "invalid_request"),
            (#"{"id": 4, "cmd": "ping""#, "invalid_json"),
            (#"{"id": 5, "cmd": "display.power", "args": {"on": null}}"#, "invalid_argument"),
        ]
        for (line, code) in cases {
            let reply = try socket.request(line)
            XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, code, line)
        }
        XCTAssertEqual(try socket.request(#"{"id": 6, "cmd": "ping"}"#)["ok"] as? Bool, true)
    }

    private func assertPNG(_ png: Data, width: Int, height: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature", file: file, line: line)
        XCTAssertGreaterThan(png.count, 24, file: file, line: line)
        let bytes = [UInt8](png)
        // IHDR follows the signature: length, "IHDR", width, height (big endian).
        XCTAssertEqual(Array(bytes[12..<16]), Array("IHDR".utf8), file: file, line: line)
        let w = bytes[16..<20].reduce(0) { $0 << 8 | Int($1) }, h = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
        XCTAssertEqual(w, width, file: file, line: line)
        XCTAssertEqual(h, height, file: file, line: line)
    }
}
