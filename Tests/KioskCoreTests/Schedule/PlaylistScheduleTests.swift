import Foundation
import KioskCore
import XCTest

/// Playlist items' dayparting as pure functions of the instant: which items may play, in order; a priority that
/// takes over; an unsynchronized clock; the next change; and the preview, across the Paris autumn change (CEST to
/// CET at 01:00 UTC on Sunday 25 October 2026).
final class PlaylistScheduleTests: XCTestCase {
    let paris = TimeZone(identifier: "Europe/Paris")!

    func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.date(from: text)!
    }

    func rule(days: Set<Weekday> = Set(Weekday.allCases), _ from: String?, _ to: String?) -> DaypartRule {
        DaypartRule(days: days, from: from.map { TimeOfDay(parsing: $0)! }, to: to.map { TimeOfDay(parsing: $0)! })
    }

    /// Item 0 always; item 1 at breakfast on weekdays; item 2 at lunch; item 3 the noon announcement.
    var menu: PlaylistSchedule {
        PlaylistSchedule(entries: [
            .init(),
            .init(rules: [rule(days: [.mon, .tue, .wed, .thu, .fri], "06:00", "11:00")]),
            .init(rules: [rule("11:00", "15:00")]),
            .init(rules: [rule("12:00", "12:05")], priority: 10),
        ], timeZone: paris)
    }

    func testItemsWhoseRulesHoldPlayInOrderAndAPriorityTakesOver() {
        // Friday 27 November 2026, Paris is +1.
        XCTAssertEqual(menu.eligible(at: utc("2026-11-27T06:00:00")), [0, 1], "07:00: the always item and breakfast")
        XCTAssertEqual(menu.eligible(at: utc("2026-11-28T06:00:00")), [0], "Saturday: no breakfast item")
        XCTAssertEqual(menu.eligible(at: utc("2026-11-27T10:30:00")), [0, 2], "11:30: lunch")
        XCTAssertEqual(menu.eligible(at: utc("2026-11-27T11:02:00")), [3], "12:02: the announcement alone")
        XCTAssertEqual(menu.eligible(at: utc("2026-11-27T11:05:00")), [0, 2], "12:05: back to lunch")
        XCTAssertEqual(menu.next(after: 0, at: utc("2026-11-27T06:00:00")), 1)
        XCTAssertNil(menu.next(after: 1, at: utc("2026-11-27T06:00:00")), "the end of the playlist")
        XCTAssertEqual(menu.first(from: 2, at: utc("2026-11-27T06:00:00")), 0, "from the top when nothing later may play")
        XCTAssertEqual(menu.first(from: 1, at: utc("2026-11-27T06:00:00")), 1)
        XCTAssertTrue(menu.isActive)
        XCTAssertFalse(PlaylistSchedule(entries: [.init(), .init()]).isActive)
    }

    func testNoItemHoldsAndTheNextChangeComesFromTheRules() {
        let schedule = PlaylistSchedule(entries: [.init(rules: [rule("11:00", "15:00")]), .init(rules: [rule(days: [.sat], "10:00", nil)])],
                                        timeZone: paris)
        let night = utc("2026-11-27T02:00:00")
        XCTAssertEqual(schedule.eligible(at: night), [])
        XCTAssertNil(schedule.first(at: night))
        XCTAssertEqual(schedule.nextChange(after: night), utc("2026-11-27T10:00:00"), "11:00 Paris")
        XCTAssertEqual(schedule.nextChange(after: utc("2026-11-27T14:00:00")), utc("2026-11-28T09:00:00"), "Saturday 10:00 Paris")
    }

    func testAnUnsynchronizedClockPlaysOnlyItemsWithoutRulesUnlessTheSceneFollowsTheClock() {
        let breakfast = utc("2026-11-27T06:00:00")
        XCTAssertEqual(menu.eligible(at: breakfast, synchronized: false), [0])
        var onlyRules = menu
        onlyRules.entries.removeFirst()
        XCTAssertEqual(onlyRules.eligible(at: breakfast, synchronized: false), [], "every item has rules: none plays")
        onlyRules.unsynchronized = .schedule
        XCTAssertEqual(onlyRules.eligible(at: breakfast, synchronized: false), [0], "the rules on the clock as it is")
    }

    /// A night window from 01:30 to 03:30 Paris on the autumn Sunday lasts three hours: 02:00 to 03:00 comes twice.
    func testPreviewAcrossTheAutumnChange() {
        let schedule = PlaylistSchedule(entries: [.init(), .init(rules: [rule("01:30", "03:30")], priority: 1)], timeZone: paris)
        let preview = schedule.preview(from: utc("2026-10-24T22:00:00"), to: utc("2026-10-25T06:00:00"))
        XCTAssertEqual(preview, [
            .init(start: utc("2026-10-24T22:00:00"), items: [0]),
            .init(start: utc("2026-10-24T23:30:00"), items: [1]),
            .init(start: utc("2026-10-25T02:30:00"), items: [0]),
        ])
    }
}
