import KioskCore
@testable import KioskVideo
import XCTest

/// The mailbox between GStreamer's threads and the main thread: frames are taken in order, beyond its capacity the
/// oldest is overtaken and counted, and frames skipped upstream show as gaps in the timestamps, with or without
/// buffer durations.
final class PlayerMailboxTests: XCTestCase {
    private func frame(_ ms: Int64, duration: Int64 = 0) -> VideoFrame {
        VideoFrame(surface: LayerSurface(size: Size(width: 2, height: 2)), timestamp: .milliseconds(ms), duration: .milliseconds(duration))
    }

    private func mailbox() throws -> PlayerMailbox {
        let loop = try MainLoop.epoll()
        return PlayerMailbox(id: 1, waker: try loop.makeWaker {})
    }

    func testFramesAreTakenInOrderAndOvertakenOnesCount() throws {
        let box = try mailbox()
        box.deliver(frame(0, duration: 40), preroll: false)
        box.deliver(frame(40, duration: 40), preroll: false)
        let taken = box.take()
        XCTAssertEqual(taken.frames.map(\.timestamp), [.milliseconds(0), .milliseconds(40)])
        XCTAssertEqual(taken.decoded, 2)
        XCTAssertEqual(taken.dropped, 0)
        let count = PlayerMailbox.capacity + 2
        for i in 0..<count { box.deliver(frame(80 + Int64(i) * 40, duration: 40), preroll: false) }
        let late = box.take()
        XCTAssertEqual(late.frames.count, PlayerMailbox.capacity)
        XCTAssertEqual(late.frames.first?.timestamp, .milliseconds(80 + 2 * 40), "the oldest two were overtaken")
        XCTAssertEqual(late.dropped, 2)
    }

    func testGapsCountAsSkippedWithAndWithoutDurations() throws {
        let withDurations = try mailbox()
        for ms: Int64 in [0, 40, 160, 200] { withDurations.deliver(frame(ms, duration: 40), preroll: false); _ = withDurations.take() }
        XCTAssertEqual(withDurations.take().dropped, 2, "80 and 120 never came")

        let without = try mailbox()
        for ms: Int64 in [0, 33, 66, 200, 233] { without.deliver(frame(ms), preroll: false); _ = without.take() }
        XCTAssertEqual(without.take().dropped, 3, "the step is learnt from the frames: 99, 132 and 165 never came")
    }

    func testLeadingFramesThatNeverCameCountAndASeekIsNoGap() throws {
        let box = try mailbox()
        box.deliver(frame(80, duration: 40), preroll: false)
        XCTAssertEqual(box.take().dropped, 2, "0 and 40 never came")
        box.seeking(paused: false, to: .seconds(5))
        box.deliver(frame(5000, duration: 40), preroll: false)
        XCTAssertEqual(box.take().dropped, 2, "a seek is not a gap")
    }

    func testAPausedSeekTakesOnlyThePrerollAtItsPosition() throws {
        let box = try mailbox()
        box.deliver(frame(1000, duration: 40), preroll: true)
        XCTAssertEqual(box.take().frames.count, 0, "no preroll asked for")
        box.seeking(paused: true, to: .milliseconds(2000))
        box.deliver(frame(1040, duration: 40), preroll: true)
        XCTAssertEqual(box.take().frames.count, 0, "the pause's own preroll, not the seek's")
        box.deliver(frame(2000, duration: 40), preroll: true)
        XCTAssertEqual(box.take().frames.map(\.timestamp), [.milliseconds(2000)])
        XCTAssertEqual(box.take().decoded, 0, "prerolled frames are not counted as decoded")
    }

    private func frame(ns: Int64, durationNs: Int64) -> VideoFrame {
        VideoFrame(surface: LayerSurface(size: Size(width: 2, height: 2)), timestamp: .nanoseconds(ns), duration: .nanoseconds(durationNs))
    }

    func testAPausedSeekNearWherePausedTakesTheFrameAtItsPositionNotTheNeighbourThePausePrerolled() throws {
        // 30 fps, paused at about 0.5 s and sought to exactly 0.5 s: the pause's own preroll (the frame before or
        // after, 33 ms away) may still arrive after the seek was asked for. Only frame 15, which spans 0.5 s, is shown.
        let step: Int64 = 33_333_333
        let box = try mailbox()
        box.seeking(paused: true, to: .milliseconds(500))
        box.deliver(frame(ns: 533_333_333, durationNs: step), preroll: true)
        box.deliver(frame(ns: 466_666_667, durationNs: step), preroll: true)
        XCTAssertEqual(box.take().frames.count, 0, "neither neighbour of the target (the one before ends at 0.5 s)")
        box.deliver(frame(ns: 500_000_400, durationNs: step), preroll: true)
        XCTAssertEqual(box.take().frames.map(\.timestamp), [.nanoseconds(500_000_400)], "the frame at 0.5 s, its timestamp rounded past it")

        // A target inside a frame's span takes that frame.
        box.seeking(paused: true, to: .milliseconds(520))
        box.deliver(frame(ns: 533_333_333, durationNs: step), preroll: true)
        XCTAssertEqual(box.take().frames.count, 0)
        box.deliver(frame(ns: 500_000_000, durationNs: step), preroll: true)
        XCTAssertEqual(box.take().frames.count, 1)
    }

    func testWithoutFrameDurationsAPausedSeekTakesTheFrameWithinHalfAStep() throws {
        let box = try mailbox()
        for ms: Int64 in [0, 33, 66] { box.deliver(frame(ms), preroll: false) }
        _ = box.take()
        box.seeking(paused: true, to: .milliseconds(500))
        box.deliver(frame(533), preroll: true)
        XCTAssertEqual(box.take().frames.count, 0, "33 ms away: a step, not half of one")
        box.deliver(frame(501), preroll: true)
        XCTAssertEqual(box.take().frames.map(\.timestamp), [.milliseconds(501)])

        let fresh = try mailbox()
        fresh.seeking(paused: true, to: .milliseconds(500))
        fresh.deliver(frame(540), preroll: true)
        XCTAssertEqual(fresh.take().frames.count, 1, "no step known yet: within 50 ms")
    }
}
