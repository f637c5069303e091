import Foundation
import KioskCore
import XCTest

/// The screen timetable in local time, with the time zone database: Europe/Berlin goes from CET (+1) to CEST (+2)
/// at 01:00 UTC on 29 March 2026 and back at 01:00 UTC on 25 October 2026.
final class ScreenScheduleTests: XCTestCase {
    let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// An instant written in UTC, `2026-03-28T21:00:00`.
    func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.date(from: text)!
    }

    func time(_ text: String) -> TimeOfDay { TimeOfDay(parsing: text)! }

    /// The changes after `start`, each as the UTC instant.
    func changes(_ schedule: ScreenSchedule, after start: Date, count: Int) -> [Date] {
        var result: [Date] = []
        var t = start
        while result.count < count, let next = schedule.nextChange(after: t) {
            result.append(next)
            t = next
        }
        return result
    }

    func testNightlyOffKeepsLocalTimeAcrossTheMarchChange() {
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("22:00"), on: time("07:00"))], timeZone: berlin)
        // Saturday 22:00 CET is 21:00 UTC; Sunday 07:00 CEST is 05:00 UTC; Sunday 22:00 CEST is 20:00 UTC.
        XCTAssertEqual(changes(schedule, after: utc("2026-03-28T12:00:00"), count: 3),
                       [utc("2026-03-28T21:00:00"), utc("2026-03-29T05:00:00"), utc("2026-03-29T20:00:00")])
        XCTAssertFalse(schedule.isOff(at: utc("2026-03-28T20:59:59")))
        XCTAssertTrue(schedule.isOff(at: utc("2026-03-28T21:00:00")))
        XCTAssertTrue(schedule.isOff(at: utc("2026-03-29T04:59:59")), "06:59:59 CEST")
        XCTAssertFalse(schedule.isOff(at: utc("2026-03-29T05:00:00")), "07:00 CEST")
    }

    func testNightlyOffKeepsLocalTimeAcrossTheOctoberChange() {
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("22:00"), on: time("07:00"))], timeZone: berlin)
        // Saturday 22:00 CEST is 20:00 UTC; Sunday 07:00 CET is 06:00 UTC; Sunday 22:00 CET is 21:00 UTC.
        XCTAssertEqual(changes(schedule, after: utc("2026-10-24T12:00:00"), count: 3),
                       [utc("2026-10-24T20:00:00"), utc("2026-10-25T06:00:00"), utc("2026-10-25T21:00:00")])
        XCTAssertTrue(schedule.isOff(at: utc("2026-10-25T05:30:00")), "06:30 CET: still off, an hour later in UTC than the day before")
    }

    func testATimeTheClocksSkipHappensAtTheChange() {
        // 02:30 does not exist on 29 March in Berlin: the clocks go from 02:00 CET to 03:00 CEST (01:00 UTC).
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("02:30"), on: time("05:00"))], timeZone: berlin)
        XCTAssertEqual(changes(schedule, after: utc("2026-03-28T12:00:00"), count: 4),
                       [utc("2026-03-29T01:00:00"), utc("2026-03-29T03:00:00"), utc("2026-03-30T00:30:00"), utc("2026-03-30T03:00:00")])
    }

    func testATimeThatHappensTwiceHappensTheFirstTime() {
        // 02:30 happens twice on 25 October in Berlin: 00:30 UTC (CEST) and 01:30 UTC (CET).
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("02:30"), on: time("06:00"))], timeZone: berlin)
        XCTAssertEqual(changes(schedule, after: utc("2026-10-24T12:00:00"), count: 2),
                       [utc("2026-10-25T00:30:00"), utc("2026-10-25T05:00:00")])
    }

    func testDaysAreTheDaysTheOffTimeFallsOn() {
        // Weekday nights: Friday 22:00 to Saturday 07:00 is off; Saturday and Sunday nights are not.
        let weekdays: Set<Weekday> = [.mon, .tue, .wed, .thu, .fri]
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("22:00"), on: time("07:00"), days: weekdays)],
                                      timeZone: berlin)
        // 2026-06-12 is a Friday (CEST, +2).
        XCTAssertEqual(changes(schedule, after: utc("2026-06-12T12:00:00"), count: 3),
                       [utc("2026-06-12T20:00:00"), utc("2026-06-13T05:00:00"), utc("2026-06-15T20:00:00")])
        XCTAssertFalse(schedule.isOff(at: utc("2026-06-13T22:00:00")), "Sunday 00:00")
    }

    func testADaytimeWindowAndOverlappingEntries() {
        let schedule = ScreenSchedule(entries: [
            ScreenScheduleEntry(off: time("12:00"), on: time("13:00"), days: [.wed]),
            ScreenScheduleEntry(off: time("12:30"), on: time("14:00"), days: [.wed]),
        ], timeZone: berlin)
        // 2026-06-10 is a Wednesday: one window 12:00-14:00 CEST.
        XCTAssertEqual(changes(schedule, after: utc("2026-06-10T00:00:00"), count: 2),
                       [utc("2026-06-10T10:00:00"), utc("2026-06-10T12:00:00")])
    }

    func testTheSameTimetableInAnotherZone() {
        let newYork = TimeZone(identifier: "America/New_York")!
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("22:00"), on: time("07:00"))], timeZone: newYork)
        // New York changes on 8 March 2026: 22:00 EST (-5) on the 7th, 07:00 EDT (-4) on the 8th.
        XCTAssertEqual(changes(schedule, after: utc("2026-03-07T12:00:00"), count: 2),
                       [utc("2026-03-08T03:00:00"), utc("2026-03-08T11:00:00")])
    }

    func testTimesOfDayParse() {
        XCTAssertEqual(TimeOfDay(parsing: "7:05"), TimeOfDay(hour: 7, minute: 5))
        XCTAssertEqual(TimeOfDay(parsing: "23:59")?.description, "23:59")
        for bad in ["24:00", "7", "07:60", "7:5", "-1:00", "ab:cd", "07:00:00", ""] {
            XCTAssertNil(TimeOfDay(parsing: bad), bad)
        }
    }

    // MARK: On the idle monitor

    func testTheMonitorBlanksAndLightsOnTheTimetableAndInputRelightsForAMinute() {
        let (loop, _) = MainLoop.manual()
        let start = utc("2026-03-28T20:59:30")  // Saturday 21:59:30 CET
        let origin = loop.now
        let wall = { start.addingTimeInterval(Double((loop.now - origin).nanosecondsClamped) / 1e9) }
        let schedule = ScreenSchedule(entries: [ScreenScheduleEntry(off: time("22:00"), on: time("07:00"))], timeZone: berlin)
        let monitor = IdleMonitor(loop: loop, settings: IdleSettings(schedule: schedule), wallClock: wall)
        var changes: [String] = []
        monitor.onChange = { _, to, reason in
            let seconds = Int(wall().timeIntervalSince(self.utc("2026-03-28T00:00:00")).rounded())
            changes.append("\(to.rawValue) \(reason) +\(seconds)")
        }
        _ = loop.advanceTime(by: .seconds(29))
        XCTAssertEqual(monitor.state, .active)
        _ = loop.advanceTime(by: .seconds(2))
        XCTAssertEqual(monitor.state, .blanked, "off at 22:00 local")
        XCTAssertTrue(monitor.isScheduledOff)

        _ = loop.advanceTime(by: .seconds(600))
        XCTAssertTrue(monitor.noteActivity(), "a touch at night wakes the screen and is swallowed")
        _ = loop.advanceTime(by: .seconds(59))
        XCTAssertEqual(monitor.state, .active)
        _ = loop.advanceTime(by: .seconds(2))
        XCTAssertEqual(monitor.state, .blanked, "blank again after a minute without input")

        // Until 07:00 CEST on Sunday, 05:00 UTC.
        _ = loop.advanceTime(to: origin + .seconds(Int64(utc("2026-03-29T05:00:01").timeIntervalSince(start))))
        XCTAssertEqual(monitor.state, .active)
        XCTAssertFalse(monitor.isScheduledOff)
        let h = 3600
        XCTAssertEqual(changes, ["blanked schedule +\(21 * h)", "active input +\(21 * h + 601)", "blanked idle +\(21 * h + 661)",
                                 "active schedule +\(29 * h)"])
    }
}
