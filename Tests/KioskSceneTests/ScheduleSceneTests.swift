import Foundation
import KioskCore
import KioskScene
import XCTest

/// Dayparting in the scene: `when:`, `priority:`, `timezone:`, `fallback:` and `unsynchronized:` decode into the
/// model, and each mistake gives one located, named line.
final class ScheduleSceneTests: XCTestCase {
    private func parse(_ text: String) throws -> Scene {
        try SceneLoader.parse(data: Data(text.utf8), file: "schedule.yaml", baseDirectory: "/tmp").scene
    }

    private func errors(_ text: String) -> [String] {
        do {
            _ = try SceneLoader.parse(data: Data(text.utf8), file: "schedule.yaml", baseDirectory: "/tmp")
            return ["ok"]
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testRulesDecode() throws {
        let scene = try parse("""
            timezone: Europe/Paris
            fallback: closed
            unsynchronized: schedule
            pages:
              - name: breakfast
                when: {days: weekdays, from: 06:00, to: "11:00"}
                widgets: [{type: rect}]
              - name: late
                duration: 20
                when:
                  - {days: [fri, sat], from: "22:00", to: "02:00"}
                  - dates: ["2026-12-31..2027-01-01", 2026-12-24]
                priority: 5
                widgets: [{type: rect}]
              - name: closed
                widgets: [{type: rect}]
            """)
        XCTAssertEqual(scene.timeZone, "Europe/Paris")
        XCTAssertEqual(scene.fallback, "closed")
        XCTAssertEqual(scene.unsynchronized, .schedule)
        XCTAssertEqual(scene.pages[0].rules, [DaypartRule(days: [.mon, .tue, .wed, .thu, .fri], from: TimeOfDay(hour: 6, minute: 0),
                                                          to: TimeOfDay(hour: 11, minute: 0))])
        XCTAssertEqual(scene.pages[1].priority, 5)
        XCTAssertEqual(scene.pages[1].rules.count, 2)
        XCTAssertEqual(scene.pages[1].rules[0].days, [.fri, .sat])
        XCTAssertEqual(scene.pages[1].rules[1].dates.map(\.description), ["2026-12-31..2027-01-01", "2026-12-24"])
        XCTAssertEqual(scene.pages[2].rules, [])
        let schedule = scene.pageSchedule()
        XCTAssertEqual(schedule.timeZone.identifier, "Europe/Paris")
        XCTAssertEqual(schedule.entries.map(\.duration), [nil, 20, nil])
        XCTAssertTrue(schedule.isActive)
    }

    func testNoScheduleKeepsTheSystemZoneAndDefaults() throws {
        let scene = try parse("pages:\n  - {name: a, widgets: [{type: rect}]}\n")
        XCTAssertNil(scene.timeZone)
        XCTAssertNil(scene.fallback)
        XCTAssertEqual(scene.unsynchronized, .fallback)
        XCTAssertEqual(scene.pageSchedule(systemZone: TimeZone(identifier: "Asia/Tokyo")!).timeZone.identifier, "Asia/Tokyo")
        XCTAssertFalse(scene.pageSchedule().isActive)
    }

    func testMistakesAreLocatedAndNamed() {
        let lines = errors("""
            timezone: Europe/Pariss
            fallback: closd
            unsynchronized: wait
            pages:
              - name: a
                when: {days: [mon, tuesday], from: "25:00", to: "7"}
                priority: high
                widgets: [{type: rect}]
              - name: b
                when: [{dates: ["2026-02-30", "2027-01-02..2026-12-31"]}, {}, {form: "07:00"}, {from: "08:00", to: "08:00"}]
                widgets: [{type: rect}]
              - name: c
                when: []
                widgets: [{type: rect}]
              - name: closed
                widgets: [{type: rect}]
            """)
        XCTAssertEqual(lines, [
            "schedule.yaml:1:11: timezone: unknown time zone 'Europe/Pariss'; did you mean 'Europe/Paris'? expected an IANA name such as Europe/Paris",
            "schedule.yaml:2:11: fallback: no page named 'closd'; did you mean 'closed'?",
            "schedule.yaml:3:17: unsynchronized: 'wait' is not one of fallback, schedule",
            "schedule.yaml:6:24: pages[0].when.days[1]: 'tuesday' is not one of mon, tue, wed, thu, fri, sat, sun",
            "schedule.yaml:6:40: pages[0].when.from: expected a time of day from 00:00 to 23:59 (\"07:00\")",
            "schedule.yaml:6:53: pages[0].when.to: expected a time of day from 00:00 to 23:59 (\"07:00\")",
            "schedule.yaml:7:15: pages[0].priority: expected a whole number",
            "schedule.yaml:10:21: pages[1].when[0].dates[0]: '2026-02-30' is not a date (YYYY-MM-DD, a day that exists) or a span of two (YYYY-MM-DD..YYYY-MM-DD)",
            "schedule.yaml:10:35: pages[1].when[0].dates[1]: the span '2027-01-02..2026-12-31' ends before it starts",
            "schedule.yaml:10:63: pages[1].when[1]: an empty rule; give 'days', 'dates', 'from' or 'to'",
            "schedule.yaml:10:68: pages[1].when[2].form: unknown key 'form'; known keys: days, dates, from, to",
            "schedule.yaml:10:104: pages[1].when[3].to: the same time as 'from' (08:00): the window would be empty; leave both out for the whole day",
            "schedule.yaml:13:11: pages[2].when: give at least one rule {days: [mon, tue], dates: [\"2026-12-24\", \"2026-12-27..2027-01-02\"], from: \"07:00\", to: \"11:00\"}, or leave 'when' out to show the page at any time",
        ])
    }

    func testEveryPageRuledWithoutFallbackIsAWarning() throws {
        let loaded = try SceneLoader.parse(data: Data("""
            pages:
              - {name: day, when: {from: "08:00", to: "20:00"}, widgets: [{type: rect}]}
              - {name: night, when: {from: "20:00", to: "08:00"}, widgets: [{type: rect}]}
            """.utf8), file: "schedule.yaml", baseDirectory: "/tmp")
        XCTAssertEqual(loaded.warnings.map(\.description), [
            "warning: schedule.yaml:2:5: fallback: every page has 'when' rules and there is no fallback page: when no rule holds, the page on screen stays",
        ])
    }

    func testFallbackWithRulesIsRefused() {
        let lines = errors("""
            fallback: night
            pages:
              - {name: day, widgets: [{type: rect}]}
              - {name: night, when: {from: "20:00"}, widgets: [{type: rect}]}
            """)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines.first?.hasPrefix("schedule.yaml:1:11: fallback: page 'night' has 'when' rules (at schedule.yaml:4:5)") == true, "\(lines)")
    }
}
