import Foundation
import KioskCore
import KioskRender
import KioskRuntime
import XCTest

/// Clocks after a step of the wall clock (NTP at boot on a board without an RTC, `date -s`): the loop's timers run
/// on the monotonic clock, which the step does not move, so the clock tick must find the wall clock's new second
/// boundaries by itself. The harness's wall clock runs with the manual loop's clock and is stepped by hand; every
/// wait is manual time.
final class ClockRealignmentTests: XCTestCase {
    private static let format = "%H:%M:%S"

    private func harness() throws -> StageHarness {
        let h = try StageHarness(yaml: """
            size: 640x360
            pages:
              - name: main
                widgets:
                  - {id: time, type: clock, format: "\(Self.format)", timezone: UTC, x: 20, y: 20, width: 300, height: 80}
            """, size: Size(width: 640, height: 360))
        h.settle()
        h.wallClock.run()
        return h
    }

    private func shown(_ h: StageHarness) throws -> String? {
        h.string(try h.stage.widget(id: "time")["shown_text"])
    }

    /// What the clock must show at the wall clock's time now.
    private func expected(_ h: StageHarness) -> String {
        ClockContent.format(time: h.wallClock.now().seconds, format: Self.format, timeZone: .utc)
    }

    /// Runs manual time until `offset` past the wall clock's next second boundary.
    private func runToNextBoundary(_ h: StageHarness, plus offset: Duration) {
        let untilBoundary = Duration.nanoseconds(1_000_000_000 - h.wallClock.now().nanosecondsIntoSecond)
        h.run(for: untilBoundary + offset)
    }

    /// After the step, the first tick (at most a second and the tick's margin away) shows the new time; from then
    /// on the clock shows each new second 10 ms after its boundary, for five boundaries in a row.
    private func checkRealigned(_ h: StageHarness, after step: String, file: StaticString = #filePath, line: UInt = #line) throws {
        h.run(for: .seconds(1) + .milliseconds(3))
        XCTAssertEqual(try shown(h), expected(h), "the first tick after the \(step)", file: file, line: line)
        for boundary in 1...5 {
            runToNextBoundary(h, plus: .milliseconds(10))
            XCTAssertEqual(try shown(h), expected(h), "10 ms after boundary \(boundary) since the \(step)", file: file, line: line)
        }
    }

    func testTheTickFollowsTheWallClockSecondsBeforeAnyStep() throws {
        let h = try harness()
        for boundary in 1...3 {
            runToNextBoundary(h, plus: .milliseconds(10))
            XCTAssertEqual(try shown(h), expected(h), "10 ms after boundary \(boundary)")
        }
    }

    /// +0.4 s from 0.5 s into a second: the tick armed before the step would land 0.4 s into each new second and
    /// show every second late; the clock instead shows each one right after its boundary.
    func testAForwardStepOfFourTenthsOfASecondRealignsTheTick() throws {
        let h = try harness()
        runToNextBoundary(h, plus: .milliseconds(500))
        XCTAssertEqual(try shown(h), expected(h))
        h.wallClock.step(by: .milliseconds(400))
        try checkRealigned(h, after: "+0.4 s step")
    }

    /// −3 h (and 0.3 s, so the phase within the second moves too): the clock shows the new time within a second,
    /// not after three hours, and then each second right after its boundary.
    func testABackwardStepOfThreeHoursShowsTheNewTimeAndRealignsTheTick() throws {
        let h = try harness()
        runToNextBoundary(h, plus: .milliseconds(200))
        let before = try XCTUnwrap(try shown(h))
        h.wallClock.step(by: .zero - .seconds(3 * 3600) - .milliseconds(300))
        try checkRealigned(h, after: "-3 h 0.3 s step")
        let hours = { (text: String) in Int(text.prefix(2)) ?? -1 }
        let after = try XCTUnwrap(try shown(h))
        XCTAssertEqual((hours(before) - hours(after) + 24) % 24, 3, "\(before) then \(after)")
    }

    /// A step back by less than a second: the clock does not skip, stall or repeat a boundary; it shows the
    /// new (earlier) second at the first tick and re-aligns.
    func testABackwardStepWithinTheSecondRealignsTheTick() throws {
        let h = try harness()
        runToNextBoundary(h, plus: .milliseconds(100))
        h.wallClock.step(by: .zero - .milliseconds(700))
        try checkRealigned(h, after: "-0.7 s step")
    }
}
