import Foundation
import KioskTestSupport
import XCTest

/// Idle settings as `kioskd run` reads them: the config file's `idle:` section and timetable (in local time, TZ), and
/// idle options that cannot work refused. The idle policy itself (dimming, blanking, the backlight, `power` events,
/// waking) is tested in process on the manual clock (KioskAppTests' `IdlePowerTests`).
final class ScreenPowerTests: XCTestCase {
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
