import KioskCore
import XCTest

/// The schedule picks, for each vblank, the newest frame due by the vblank nearest its time; frames due later
/// wait, older ones are superseded and counted, and a frame with no due time is shown at once.
final class VideoFrameScheduleTests: XCTestCase {
    private let period = Duration.nanoseconds(16_666_667)
    private let t0 = MonotonicInstant(nanoseconds: 10_000_000_000)

    private func frame(_ ms: Int64, dueMs: Int64?) -> VideoFrame {
        VideoFrame(surface: LayerSurface(size: Size(width: 2, height: 2)), timestamp: .milliseconds(ms),
                   duration: .milliseconds(33), due: dueMs.map { t0 + .milliseconds($0) })
    }

    func testAFrameWaitsForTheVblankNearestItsDueTime() {
        var schedule = VideoFrameSchedule()
        _ = schedule.add(frame(0, dueMs: 40))
        // Vblanks at 0, 16.7, 33.3, 50: 40 ms is nearest the one at 33.3 (6.7 ms away), not 50 (10 ms).
        XCTAssertNil(schedule.take(forVblankAt: t0 + period, period: period).frame, "16.7 ms is 23 ms early")
        let at33 = schedule.take(forVblankAt: t0 + period * 2, period: period)
        XCTAssertEqual(at33.frame?.timestamp, .milliseconds(0))
        XCTAssertEqual(at33.superseded, 0)
        XCTAssertTrue(schedule.isEmpty)
    }

    func testFramesDueLaterStayAndOlderOnesAreSuperseded() {
        var schedule = VideoFrameSchedule()
        _ = schedule.add(frame(0, dueMs: 0))
        _ = schedule.add(frame(33, dueMs: 5))
        _ = schedule.add(frame(66, dueMs: 66))
        let first = schedule.take(forVblankAt: t0, period: period)
        XCTAssertEqual(first.frame?.timestamp, .milliseconds(33), "the newest due by this vblank")
        XCTAssertEqual(first.superseded, 1, "the one before it never reached a vblank")
        XCTAssertEqual(schedule.waiting.map(\.timestamp), [.milliseconds(66)])
        XCTAssertNil(schedule.take(forVblankAt: t0 + period * 3, period: period).frame, "50 ms: 66 is nearer the next")
        XCTAssertEqual(schedule.take(forVblankAt: t0 + period * 4, period: period).frame?.timestamp, .milliseconds(66))
    }

    func testAFrameWithNoDueTimeIsShownAtOnceAndRemoveAllCounts() {
        var schedule = VideoFrameSchedule()
        _ = schedule.add(frame(0, dueMs: 500))
        _ = schedule.add(frame(33, dueMs: nil))
        let taken = schedule.take(forVblankAt: t0, period: period)
        XCTAssertEqual(taken.frame?.timestamp, .milliseconds(33))
        XCTAssertEqual(taken.superseded, 1)
        _ = schedule.add(frame(66, dueMs: 900))
        _ = schedule.add(frame(99, dueMs: 933))
        XCTAssertEqual(schedule.removeAll(), 2)
        XCTAssertTrue(schedule.isEmpty)
    }

    func testNoMoreThanTheCapacityWait() {
        var schedule = VideoFrameSchedule()
        var dropped = 0
        for i in 0..<(VideoFrameSchedule.capacity + 3) { dropped += schedule.add(frame(Int64(i) * 33, dueMs: Int64(i) * 33)) }
        XCTAssertEqual(dropped, 3, "with no vblank coming, the oldest go")
        XCTAssertEqual(schedule.waiting.first?.timestamp, .milliseconds(99))
        XCTAssertEqual(schedule.waiting.count, VideoFrameSchedule.capacity)
    }
}
