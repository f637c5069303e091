import Foundation
import KioskTestSupport
import XCTest

/// Idle dimming and blanking of a headless `kioskd run`: the backlight through a directory laid out as
/// /sys/class/backlight, `power` events, the idle state in `stats` and `display.info`, and `display.power`
/// waking the screen.
final class ScreenPowerTests: XCTestCase {
    func makeBacklight() throws -> URL {
        let classDir = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-backlight-\(UUID().uuidString)")
        let device = classDir.appendingPathComponent("panel_backlight")
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try Data("255\n".utf8).write(to: device.appendingPathComponent("max_brightness"))
        try Data("200\n".utf8).write(to: device.appendingPathComponent("brightness"))
        return classDir
    }

    func brightness(_ classDir: URL) throws -> String {
        String(decoding: try Data(contentsOf: classDir.appendingPathComponent("panel_backlight/brightness")), as: UTF8.self)
    }

    func testDimsThenBlanksAndDisplayPowerWakes() throws {
        let classDir = try makeBacklight()
        defer { try? FileManager.default.removeItem(at: classDir) }
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--idle-dim-after", "1",
                                           "--idle-dim-level", "0.25", "--idle-blank-after", "2", "--backlight-dir", classDir.path])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let events = try ControlEventStream(daemon, events: ["power"])
        let dimmed = try events.waitFor("power") { $0.string("state") == "dimmed" }
        XCTAssertEqual(dimmed.string("previous"), "active")
        XCTAssertEqual(dimmed.string("reason"), "idle")
        XCTAssertEqual(try brightness(classDir), "50\n", "a quarter of the brightness found")
        let blanked = try events.waitFor("power") { $0.string("state") == "blanked" }
        XCTAssertEqual(blanked.string("previous"), "dimmed")
        let info = try XCTUnwrap(events.request(#"{"id": 1, "cmd": "display.info"}"#)["result"] as? [String: Any])
        XCTAssertEqual(info["power"] as? String, "off", "blanking turns the output off")
        XCTAssertEqual((info["idle"] as? [String: Any])?["state"] as? String, "blanked")
        XCTAssertEqual((info["idle"] as? [String: Any])?["backlight"] as? String, classDir.appendingPathComponent("panel_backlight").path)

        _ = try events.request(#"{"id": 2, "cmd": "display.power", "args": {"on": true}}"#)
        let woken = try events.waitFor("power") { $0.string("state") == "active" }
        XCTAssertEqual(woken.string("reason"), "display.power")
        XCTAssertEqual(try brightness(classDir), "200\n", "the brightness is restored")
        let stats = try events.stats()
        XCTAssertEqual((stats["idle"] as? [String: Any])?["state"] as? String, "active")
        XCTAssertEqual(stats["power"] as? String, "on")
    }

    func testTheBoardFileNamesTheBacklight() throws {
        let classDir = try makeBacklight()
        defer { try? FileManager.default.removeItem(at: classDir) }
        // Sorted first, so without the board file's name it would be the one dimmed.
        let other = classDir.appendingPathComponent("aaa_backlight")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("10\n".utf8).write(to: other.appendingPathComponent("max_brightness"))
        try Data("10\n".utf8).write(to: other.appendingPathComponent("brightness"))
        let board = classDir.appendingPathComponent("board.yaml")
        try Data("board: test panel\nbacklight: panel_backlight\n".utf8).write(to: board)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--board", board.path,
                                           "--idle-dim-after", "1", "--idle-dim-level", "0.5", "--backlight-dir", classDir.path])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let events = try ControlEventStream(daemon, events: ["power"])
        try events.waitFor("power") { $0.string("state") == "dimmed" }
        XCTAssertEqual(try brightness(classDir), "100\n")
        XCTAssertEqual(String(decoding: try Data(contentsOf: other.appendingPathComponent("brightness")), as: UTF8.self), "10\n")
    }

    func testWithoutABacklightDimmingIsSkippedAndBlankingStillWorks() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-no-backlight-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--idle-dim-after", "1",
                                           "--idle-blank-after", "2", "--backlight-dir", empty.path])
        let events = try ControlEventStream(daemon, events: ["power"])
        _ = try events.waitFor("power") { $0.string("state") == "blanked" }
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stderr.components(separatedBy: "\n").filter { $0.contains("no backlight in \(empty.path): idle dimming skipped") }.count, 1,
                       result.stderr)
    }

    /// The config file's `idle:` section drives the same machinery; the timetable is read in local time (TZ).
    func testTheConfigFilesIdleSectionAndSchedule() throws {
        let dir = try KioskdProcess.scratchDirectory("idle-config")
        let config = dir.appendingPathComponent("kioskd.yaml")
        // An off time from a minute ago to two minutes ahead, on the wall clock of TZ=UTC.
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        func hhmm(_ offset: Double) -> String {
            let parts = utc.dateComponents([.hour, .minute], from: Date().addingTimeInterval(offset))
            return String(format: "%02d:%02d", parts.hour!, parts.minute!)
        }
        try """
            backend: headless
            mode: 320x240@60
            idle:
              blank_after: 30
              schedule: [{off: "\(hhmm(-60))", on: "\(hhmm(180))"}]
            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path], environment: ["TZ": "UTC"])
        let events = try ControlEventStream(daemon, events: ["power"])
        // The timetable is read on the loop's first turn, before a subscriber can be there: poll the state.
        try Poll.until("the scheduled blank", timeout: 20, interval: 0.05) {
            (try events.stats()["idle"] as? [String: Any])?["scheduled_off"] as? Bool == true
        }
        let stats = try events.stats()
        XCTAssertEqual((stats["idle"] as? [String: Any])?["state"] as? String, "blanked")
        XCTAssertEqual(stats["power"] as? String, "off")
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("screen active → blanked (schedule)"), result.stderr)
    }

    func testIdleOptionsThatCannotWorkAreRefused() throws {
        let result = try KioskdProcess.run(["run", "--backend", "headless", "--idle-dim-after", "30", "--idle-blank-after", "10", "--socket", "none"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("--idle-blank-after 10.0 must come after --idle-dim-after 30.0"), result.stderr)
    }
}
