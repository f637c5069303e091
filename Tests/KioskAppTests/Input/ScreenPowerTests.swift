import Foundation
import KioskCore
import KioskScene
import KioskTestSupport
import XCTest

/// Idle dimming and blanking of a headless kiosk in process: the backlight through a directory laid out as
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
        let daemon = try InProcessKiosk(backlightDirectory: classDir.path) {
            $0.idle.dimAfter = 1
            $0.idle.dimLevel = 0.25
            $0.idle.blankAfter = 2
        }
        defer { daemon.stopExpectingSuccess() }
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
        let daemon = try InProcessKiosk(backlightDirectory: classDir.path) {
            $0.board = board.path
            $0.idle.dimAfter = 1
            $0.idle.dimLevel = 0.5
        }
        defer { daemon.stopExpectingSuccess() }
        let events = try ControlEventStream(daemon, events: ["power"])
        try events.waitFor("power") { $0.string("state") == "dimmed" }
        XCTAssertEqual(try brightness(classDir), "100\n")
        XCTAssertEqual(String(decoding: try Data(contentsOf: other.appendingPathComponent("brightness")), as: UTF8.self), "10\n")
    }

    func testWithoutABacklightDimmingIsSkippedAndBlankingStillWorks() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-no-backlight-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let daemon = try InProcessKiosk(backlightDirectory: empty.path) {
            $0.idle.dimAfter = 1
            $0.idle.blankAfter = 2
        }
        let events = try ControlEventStream(daemon, events: ["power"])
        _ = try events.waitFor("power") { $0.string("state") == "blanked" }
        daemon.stopExpectingSuccess()
        let log = daemon.logLines
        XCTAssertEqual(log.filter { $0.contains("no backlight in \(empty.path): idle dimming skipped") }.count, 1, "\(log)")
    }

    /// The config file's `idle:` section drives the same machinery; the timetable is read in local time.
    func testTheConfigFilesIdleSectionAndSchedule() throws {
        let dir = try KioskdProcess.scratchDirectory("idle-config")
        let config = dir.appendingPathComponent("kioskd.yaml")
        // An off time from a minute ago to two minutes ahead, on the local wall clock (the process's, the kiosk's too).
        var local = Calendar(identifier: .gregorian)
        local.timeZone = .current
        func hhmm(_ offset: Double) -> String {
            let parts = local.dateComponents([.hour, .minute], from: Date().addingTimeInterval(offset))
            return String(format: "%02d:%02d", parts.hour!, parts.minute!)
        }
        try """
            backend: headless
            mode: 320x240@60
            idle:
              blank_after: 30
              schedule: [{off: "\(hhmm(-60))", on: "\(hhmm(180))"}]
            """.write(to: config, atomically: true, encoding: .utf8)
        // Everything from the config file; the scene file unwatched (see InProcessKiosk).
        var commandLine = KioskConfig()
        commandLine.watch = false
        let daemon = try InProcessKiosk(commandLine, config: config.path)
        let events = try ControlEventStream(daemon, events: ["power"])
        // The timetable is read on the loop's first turn, before a subscriber can be there: poll the state.
        try Poll.until("the scheduled blank", timeout: 20, interval: 0.05) {
            (try events.stats()["idle"] as? [String: Any])?["scheduled_off"] as? Bool == true
        }
        let stats = try events.stats()
        XCTAssertEqual((stats["idle"] as? [String: Any])?["state"] as? String, "blanked")
        XCTAssertEqual(stats["power"] as? String, "off")
        daemon.stopExpectingSuccess()
        XCTAssertTrue(daemon.logLines.contains { $0.contains("screen active → blanked (schedule)") }, "\(daemon.logLines)")
    }
}
