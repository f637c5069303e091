import Foundation
import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// Dayparting on a headless stage with the manual clock: a day compressed shows the pages the preview
/// (`PageSchedule.preview`) says, at the times it says; a clock that is not synchronized shows the fallback; a page
/// change is never cut mid-transition.
final class ScheduleStageTests: XCTestCase {
    /// Europe/Paris; `StageHarness.fixedTime` is Tuesday 14 November 2023, 23:13:20 there (+1).
    static let restaurant = """
        size: 64x48
        timezone: Europe/Paris
        fallback: closed
        pages:
          - name: breakfast
            duration: 900
            transition: {type: fade, duration: 2}
            when: {days: weekdays, from: "06:00", to: "11:00"}
            widgets: [{type: rect, background: "#ff0000"}]
          - name: coffee
            duration: 600
            when: {from: "06:30", to: "10:00"}
            widgets: [{type: rect, background: "#00ff00"}]
          - name: lunch
            when: {from: "11:00", to: "15:00"}
            widgets: [{type: rect, background: "#0000ff"}]
          - name: announcement
            priority: 10
            when: {from: "12:00", to: "12:05"}
            widgets: [{type: rect, background: "#ffff00"}]
          - name: evening
            duration: 1200
            transition: fade
            when: {from: "18:00", to: "00:30"}
            widgets: [{type: rect, background: "#00ffff"}]
          - name: late
            duration: 300
            when: {days: [tue], from: "23:00", to: "01:00"}
            widgets: [{type: rect, background: "#ff00ff"}]
          - name: closed
            widgets: [{type: rect, background: "#000000"}]
        """

    func testADayCompressedShowsWhatThePreviewSays() throws {
        let h = try StageHarness(yaml: Self.restaurant)
        var shown: [(seconds: Int, page: String)] = [(h.wallClock.seconds, h.stage.currentPage)]
        h.listeners.append(h.stage.addEventListener { event in
            if case .pageShown(let name) = event { shown.append((h.wallClock.seconds, name)) }
        })
        h.settle()
        h.wallClock.run()
        let start = StageHarness.fixedTime
        // The first frames took some loop time: the day runs from the wall-clock time the stage started at.
        h.run(for: .seconds(86_400) - (h.loop.now - MonotonicInstant(nanoseconds: 0)))

        let schedule = h.stage.scene.pageSchedule()
        let preview = schedule.preview(from: Date(timeIntervalSince1970: Double(start)), to: Date(timeIntervalSince1970: Double(start + 86_400)),
                                       firstPage: "breakfast")
        XCTAssertEqual(shown.map(\.page), preview.map(\.page))
        // Each change within a second of the preview's time (the loop's first frames came before the clock ran).
        for (screen, planned) in zip(shown, preview) {
            XCTAssertEqual(Double(screen.seconds), planned.start.timeIntervalSince1970, accuracy: 1, "\(screen.page)")
        }
        // What the day must hold, whatever the preview says: the late loop, the fallback at night, breakfast and
        // coffee alternating, lunch, the announcement taking over at noon, the evening.
        let pages = shown.map(\.page)
        XCTAssertEqual(pages.first, "evening")
        for page in ["late", "closed", "breakfast", "coffee", "lunch", "announcement", "evening"] { XCTAssertTrue(pages.contains(page), page) }
        let noon = try XCTUnwrap(shown.first { $0.page == "announcement" })
        XCTAssertEqual(noon.seconds, start + 12 * 3600 + 46 * 60 + 40, "12:00 Paris on Wednesday")
        XCTAssertEqual(shown.filter { $0.page == "announcement" }.count, 1)
    }

    func testUnsynchronizedClockShowsTheFallbackAndSyncAppliesAtOnce() throws {
        let h = try StageHarness(yaml: Self.restaurant)
        h.settle()
        h.wallClock.run()
        // Wednesday 07:00 Paris: breakfast and coffee.
        h.wallClock.seconds = StageHarness.fixedTime + 7 * 3600 + 46 * 60 + 40
        h.stage.clockSynchronized = false
        XCTAssertEqual(h.stage.currentPage, "closed", "a clock that may be wrong shows the fallback")
        h.settle()
        h.stage.clockSynchronized = true
        XCTAssertEqual(h.stage.currentPage, "breakfast", "synchronized: the schedule at once")
        XCTAssertTrue(h.stage.isInTransition, "breakfast fades in over 2 s")
        // The clock is lost again during the fade: the change waits for the fade to end.
        h.run(for: .seconds(1))
        h.stage.clockSynchronized = false
        XCTAssertEqual(h.stage.currentPage, "breakfast", "never cut mid-transition")
        h.run(for: .milliseconds(1100))
        XCTAssertFalse(h.stage.isInTransition)
        XCTAssertEqual(h.stage.currentPage, "closed")
        h.settle()
        XCTAssertEqual(try h.pixel(x: 5, y: 5), 0x000000)
    }

    func testTimedPageWhoseWindowClosesLeavesAtItsTurn() throws {
        let h = try StageHarness(yaml: """
            size: 64x48
            timezone: UTC
            pages:
              - {name: a, duration: 40, widgets: [{type: rect, background: "#ff0000"}]}
              - {name: b, duration: 40, when: {from: "22:00", to: "22:14"}, widgets: [{type: rect, background: "#00ff00"}]}
            """)
        // 22:13:20 UTC: a until 22:14:00, when b's window closes: a again, and stays.
        h.settle()
        h.wallClock.run()
        XCTAssertEqual(h.stage.currentPage, "a")
        h.run(for: .seconds(40) - (h.loop.now - MonotonicInstant(nanoseconds: 0)) + .milliseconds(10))
        XCTAssertEqual(h.stage.currentPage, "a", "b's window closed at 22:14:00, the turn")
        try h.stage.showPage("b", transition: nil)
        h.run(for: .seconds(39))
        XCTAssertEqual(h.stage.currentPage, "b", "shown by hand, b stays its whole turn though its window is closed")
        h.run(for: .seconds(2))
        XCTAssertEqual(h.stage.currentPage, "a")
    }
}
