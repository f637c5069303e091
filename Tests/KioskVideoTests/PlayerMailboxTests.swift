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
}
