import Foundation
import KioskCore
import XCTest

/// Dayparting rules as pure functions of the instant, with the time zone database. Europe/Paris goes from CET (+1)
/// to CEST (+2) at 01:00 UTC on Sunday 29 March 2026 and back at 01:00 UTC on Sunday 25 October 2026;
/// America/New_York from EST (-5) to EDT (-4) at 07:00 UTC on Sunday 8 March 2026 and back at 06:00 UTC on Sunday
/// 1 November 2026.
final class PageScheduleTests: XCTestCase {
    let paris = TimeZone(identifier: "Europe/Paris")!
    let newYork = TimeZone(identifier: "America/New_York")!

    /// An instant written in UTC, `2026-03-28T21:00:00`.
    func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.date(from: text)!
    }

    func time(_ text: String) -> TimeOfDay { TimeOfDay(parsing: text)! }
    func date(_ text: String) -> CivilDate { CivilDate(parsing: text)! }

    func rule(days: Set<Weekday> = Set(Weekday.allCases), dates: [DateSpan] = [], _ from: String?, _ to: String?) -> DaypartRule {
        DaypartRule(days: days, dates: dates, from: from.map(time), to: to.map(time))
    }

    /// The holding of `rule` at each instant.
    func holds(_ rule: DaypartRule, _ zone: TimeZone, _ instants: [String]) -> [Bool] {
        instants.map { rule.holds(at: utc($0), in: zone) }
    }

    func testCivilDatesCountDaysAcrossLeapYearsAndNewYear() {
        XCTAssertEqual(date("1970-01-01").dayNumber, 0)
        XCTAssertEqual(date("2027-01-01").dayNumber, date("2026-12-31").dayNumber + 1)
        XCTAssertEqual(date("2028-03-01").dayNumber, date("2028-02-29").dayNumber + 1)
        XCTAssertNil(CivilDate(parsing: "2026-02-29"), "2026 is not a leap year")
        XCTAssertNil(CivilDate(parsing: "2026-13-01"))
        XCTAssertNil(CivilDate(parsing: "26-01-01"))
        for n in [-1, 0, 59, 20_453, 2_932_896] { XCTAssertEqual(CivilDate(dayNumber: n).dayNumber, n) }
        XCTAssertEqual(date("2026-01-01").weekday, .thu)
        XCTAssertEqual(date("2026-03-29").weekday, .sun)
    }

    func testParisSpringSkippedStartHappensAtTheJump() {
        // 02:30 does not exist on 29 March: the window opens at the jump, 03:00 CEST (01:00 UTC), and closes at
        // 04:00 CEST (02:00 UTC).
        let r = rule("02:30", "04:00")
        XCTAssertEqual(holds(r, paris, ["2026-03-29T00:59:59", "2026-03-29T01:00:00", "2026-03-29T01:59:59", "2026-03-29T02:00:00"]),
                       [false, true, true, false])
        let schedule = PageSchedule(entries: [.init(name: "night", rules: [r])], timeZone: paris)
        XCTAssertEqual(schedule.nextChange(after: utc("2026-03-28T23:00:00")), utc("2026-03-29T01:00:00"))
        // A breakfast window keeps local time: 07:00 CET the day before (06:00 UTC), 07:00 CEST on the day (05:00 UTC).
        let breakfast = rule("07:00", "11:00")
        XCTAssertEqual(holds(breakfast, paris, ["2026-03-28T05:59:59", "2026-03-28T06:00:00", "2026-03-29T04:59:59", "2026-03-29T05:00:00",
                                                "2026-03-29T08:59:59", "2026-03-29T09:00:00"]),
                       [false, true, false, true, true, false])
    }

    func testParisAutumnNightWindowIsAnHourLonger() {
        // Saturday 24 October 22:00 CEST (20:00 UTC) to Sunday 06:00 CET (05:00 UTC): nine hours on the glass.
        let r = rule(days: [.sat], "22:00", "06:00")
        XCTAssertEqual(holds(r, paris, ["2026-10-24T19:59:59", "2026-10-24T20:00:00", "2026-10-25T01:30:00", "2026-10-25T04:59:59",
                                        "2026-10-25T05:00:00"]),
                       [false, true, true, true, false])
        // 02:30 happens twice on 25 October: a window from it starts the first time (00:30 UTC, CEST) and 03:00
        // happens once, in CET (02:00 UTC).
        let twice = rule("02:30", "03:00")
        XCTAssertEqual(holds(twice, paris, ["2026-10-25T00:29:59", "2026-10-25T00:30:00", "2026-10-25T01:45:00", "2026-10-25T02:00:00"]),
                       [false, true, true, false])
    }

    func testNewYorkSpringMidnightCrossingEndsAtTheNewOffset() {
        // Saturday 7 March 23:00 EST (04:00 UTC on the 8th) to Sunday 03:00 EDT (07:00 UTC): three hours, not four.
        let r = rule(days: [.sat], "23:00", "03:00")
        XCTAssertEqual(holds(r, newYork, ["2026-03-08T03:59:59", "2026-03-08T04:00:00", "2026-03-08T06:59:59", "2026-03-08T07:00:00"]),
                       [false, true, true, false])
        // The next Saturday, in EDT: 23:00 EDT is 03:00 UTC.
        XCTAssertEqual(holds(r, newYork, ["2026-03-15T02:59:59", "2026-03-15T03:00:00"]), [false, true])
    }

    func testNewYorkAutumnRepeatedHourCountsOnce() {
        // 01:30 to 01:45 on 1 November: the first 01:30 (EDT, 05:30 UTC) only, not the second (EST, 06:30 UTC).
        let r = rule(dates: [DateSpan(day: date("2026-11-01"))], "01:30", "01:45")
        XCTAssertEqual(holds(r, newYork, ["2026-11-01T05:29:59", "2026-11-01T05:30:00", "2026-11-01T05:44:59", "2026-11-01T05:45:00",
                                          "2026-11-01T06:35:00"]),
                       [false, true, true, false, false])
    }

    func testDaysNameTheDayAWindowStartsOn() {
        // Friday 22:00 to 02:00 (Paris, winter: +1): holds early Saturday, not early Friday, not Saturday night.
        let r = rule(days: [.fri], "22:00", "02:00")
        XCTAssertEqual(holds(r, paris, ["2026-01-09T21:00:00", "2026-01-10T00:59:59", "2026-01-10T01:00:00", "2026-01-09T00:30:00",
                                        "2026-01-10T22:00:00"]),
                       [true, true, false, false, false])
        // No times: the whole day, midnight to midnight.
        let weekend = rule(days: [.sat, .sun], nil, nil)
        XCTAssertEqual(holds(weekend, paris, ["2026-01-09T22:59:59", "2026-01-09T23:00:00", "2026-01-11T22:59:59", "2026-01-11T23:00:00"]),
                       [false, true, true, false])
    }

    func testDateSpanAcrossNewYear() {
        // New Year's Eve and Day, 20:00 to 02:00 (Paris, +1): from 31 December 20:00 to 2 January 02:00 local.
        let span = DateSpan(first: date("2026-12-31"), last: date("2027-01-01"))!
        let r = rule(dates: [span], "20:00", "02:00")
        XCTAssertEqual(holds(r, paris, ["2026-12-30T23:00:00", "2026-12-31T18:59:59", "2026-12-31T19:00:00", "2026-12-31T23:30:00",
                                        "2027-01-01T12:00:00", "2027-01-01T19:30:00", "2027-01-02T00:59:59", "2027-01-02T01:00:00"]),
                       [false, false, true, true, false, true, true, false])
        XCTAssertNil(DateSpan(first: date("2027-01-01"), last: date("2026-12-31")))
    }

    /// Breakfast until 11:00, lunch until 15:00, a noon announcement that takes over, `closed` otherwise (Paris, +1).
    var restaurant: PageSchedule {
        PageSchedule(entries: [
            .init(name: "breakfast", rules: [rule(days: [.mon, .tue, .wed, .thu, .fri], "06:00", "11:00")]),
            .init(name: "lunch", rules: [rule("11:00", "15:00")]),
            .init(name: "offer", rules: [rule(days: [.sat, .sun], "10:00", "15:00")]),
            .init(name: "announcement", rules: [rule("12:00", "12:05")], priority: 10),
            .init(name: "closed"),
        ], fallback: "closed", timeZone: paris)
    }

    func testPriorityTakesOverAndFallbackFillsTheGaps() {
        let s = restaurant
        XCTAssertEqual(s.pages(at: utc("2026-01-09T04:59:59")), ["closed"], "Friday 05:59")
        XCTAssertEqual(s.pages(at: utc("2026-01-09T05:00:00")), ["breakfast"])
        XCTAssertEqual(s.pages(at: utc("2026-01-09T10:00:00")), ["lunch"])
        XCTAssertEqual(s.pages(at: utc("2026-01-09T11:00:00")), ["announcement"], "priority 10 takes over at noon")
        XCTAssertEqual(s.pages(at: utc("2026-01-09T11:05:00")), ["lunch"])
        XCTAssertEqual(s.pages(at: utc("2026-01-10T10:30:00")), ["lunch", "offer"], "Saturday 11:30: both, in scene order")
        XCTAssertEqual(s.pages(at: utc("2026-01-10T05:30:00")), ["closed"], "no breakfast on Saturday")
        XCTAssertEqual(s.pages(at: utc("2026-01-09T20:00:00")), ["closed"])
        var noFallback = s
        noFallback.fallback = nil
        noFallback.entries.removeLast()
        XCTAssertEqual(noFallback.pages(at: utc("2026-01-09T20:00:00")), [], "nothing holds and no fallback: what is shown stays")
        XCTAssertEqual(noFallback.turn(from: "lunch", at: utc("2026-01-09T20:00:00")), nil)
    }

    func testTurnGoesToTheNextPageShownAndStaysWhenAlone() {
        let s = restaurant
        XCTAssertEqual(s.turn(from: "lunch", at: utc("2026-01-10T10:30:00")), "offer")
        XCTAssertEqual(s.turn(from: "offer", at: utc("2026-01-10T10:30:00")), "lunch", "wraps")
        XCTAssertEqual(s.turn(from: "lunch", at: utc("2026-01-09T10:00:00")), "lunch", "alone: stays")
        XCTAssertEqual(s.turn(from: "breakfast", at: utc("2026-01-09T10:00:00")), "lunch", "its window closed")
        XCTAssertEqual(s.settle("breakfast", at: utc("2026-01-09T09:00:00")), nil, "still shown")
        XCTAssertEqual(s.settle("breakfast", at: utc("2026-01-09T10:00:00")), "lunch")
    }

    func testUnsynchronizedClockShowsFallbackThenStepsToTheSchedule() {
        var s = restaurant
        // The clock at boot says 1970 (no RTC) or a wrong morning: fallback until synchronized.
        XCTAssertEqual(s.pages(at: Date(timeIntervalSince1970: 0), synchronized: false), ["closed"])
        XCTAssertEqual(s.pages(at: utc("2026-01-09T05:30:00"), synchronized: false), ["closed"])
        XCTAssertEqual(s.firstPage(at: utc("2026-01-09T05:30:00"), synchronized: false), "closed")
        // Synchronized, the clock stepped to Friday 12:01: the announcement, at once.
        XCTAssertEqual(s.settle("closed", at: utc("2026-01-09T11:01:00"), synchronized: true), "announcement")
        s.unsynchronized = .schedule
        XCTAssertEqual(s.pages(at: utc("2026-01-09T05:30:00"), synchronized: false), ["breakfast"])
        // With no fallback, an unsynchronized clock shows only the pages without rules.
        let plain = PageSchedule(entries: [.init(name: "a", rules: [rule("06:00", "11:00")]), .init(name: "b")], timeZone: paris)
        XCTAssertEqual(plain.pages(at: utc("2026-01-09T05:30:00"), synchronized: false), ["b"])
    }

    func testPreviewOfUntimedPagesFollowsTheWindows() {
        let s = restaurant
        let shown = s.preview(from: utc("2026-01-09T03:00:00"), to: utc("2026-01-09T15:00:00"), firstPage: "breakfast")
        XCTAssertEqual(shown.map(\.page), ["closed", "breakfast", "lunch", "announcement", "lunch", "closed"])
        XCTAssertEqual(shown.map(\.start), [utc("2026-01-09T03:00:00"), utc("2026-01-09T05:00:00"), utc("2026-01-09T10:00:00"),
                                            utc("2026-01-09T11:00:00"), utc("2026-01-09T11:05:00"), utc("2026-01-09T14:00:00")])
    }

    func testPreviewOfATimedLoopLeavesAClosedPageAtItsTurn() {
        // a and b alternate every 40 s from 10:00 (Paris, +1); b's window closes at 10:01:00, in the middle of b's
        // turn from 10:00:40: b stays until its turn at 10:01:20, then only a shows, and stays.
        let s = PageSchedule(entries: [.init(name: "a", duration: 40),
                                       .init(name: "b", rules: [rule("09:00", "10:01")], duration: 40)], timeZone: paris)
        let shown = s.preview(from: utc("2026-01-09T09:00:00"), to: utc("2026-01-09T09:03:00"), firstPage: "a")
        XCTAssertEqual(shown.map(\.page), ["a", "b", "a"])
        XCTAssertEqual(shown.map { $0.start.timeIntervalSince(utc("2026-01-09T09:00:00")) }, [0, 40, 80])
        XCTAssertEqual(s.turn(from: "a", at: utc("2026-01-09T09:02:00")), "a")
    }

    func testNoRulesIsInactiveAndShowsEveryPage() {
        let s = PageSchedule(entries: [.init(name: "a", duration: 5), .init(name: "b", duration: 5)], timeZone: paris)
        XCTAssertFalse(s.isActive)
        XCTAssertEqual(s.pages(at: utc("2026-01-09T09:00:00"), synchronized: false), ["a", "b"])
        XCTAssertNil(s.nextChange(after: utc("2026-01-09T09:00:00")))
        XCTAssertTrue(restaurant.isActive)
    }
}
