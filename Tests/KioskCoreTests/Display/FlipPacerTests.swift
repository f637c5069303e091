import KioskCore
import XCTest

final class FlipPacerTests: XCTestCase {
    private let frame = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000).frameDuration
    private let t0 = MonotonicInstant(nanoseconds: 7_000_000_000)

    private func event(_ sequence: UInt64, at ns: UInt64, buffer: Int = 0) -> FlipEvent {
        FlipEvent(sequence: sequence, timestamp: MonotonicInstant(nanoseconds: ns), bufferIndex: buffer)
    }

    func testVblankRuleAcceptsAdvancingSequencesAndRejectsStuckOrUnstampedOnes() {
        XCTAssertNil(FlipPacer.vblankMissing(previous: nil, current: event(10, at: 5)))
        XCTAssertNil(FlipPacer.vblankMissing(previous: event(10, at: 5), current: event(11, at: 6)))
        XCTAssertNil(FlipPacer.vblankMissing(previous: event(10, at: 5), current: event(14, at: 9)), "a gap is a missed vblank, not a missing one")
        XCTAssertEqual(FlipPacer.vblankMissing(previous: event(0, at: 5), current: event(0, at: 9)),
                       "the vblank sequence did not advance between two flips (0)")
        XCTAssertEqual(FlipPacer.vblankMissing(previous: nil, current: event(3, at: 0)), "the flip event has no vblank timestamp")
    }

    /// Around a modeset a real vblank may report one flip with the count of the flip before: one such pair, or two
    /// separated by a modeset, is no evidence.
    func testAStuckSequenceNowAndThenKeepsVblankPacing() {
        let (loop, _) = MainLoop.manual(startingAt: t0)
        let pacer = FlipPacer(frameDuration: frame)
        var delivered = 0
        for sequence: UInt64 in [10, 11, 11, 12, 12, 13, 14] {
            pacer.flipCompleted(event(sequence, at: t0.nanoseconds + sequence), on: loop) { _ in delivered += 1 }
        }
        pacer.forgetHeld()
        for sequence: UInt64 in [14, 14] {
            pacer.flipCompleted(event(sequence, at: t0.nanoseconds + sequence), on: loop) { _ in delivered += 1 }
        }
        pacer.forgetHeld()
        for sequence: UInt64 in [14, 14, 15] {
            pacer.flipCompleted(event(sequence, at: t0.nanoseconds + sequence), on: loop) { _ in delivered += 1 }
        }
        XCTAssertEqual(pacer.pacing, .vblank)
        XCTAssertEqual(delivered, 12, "every event passed on at once")
    }

    func testVblankPacingPassesEventsOnAtOnce() {
        let (loop, _) = MainLoop.manual(startingAt: t0)
        let pacer = FlipPacer(frameDuration: frame)
        var delivered: [FlipEvent] = []
        for k in 1...5 as ClosedRange<UInt64> {
            let raw = event(100 + k, at: t0.nanoseconds + k * 16_666_667, buffer: Int(k % 2))
            XCTAssertNil(pacer.flipCompleted(raw, on: loop) { delivered.append($0) })
            XCTAssertEqual(delivered.last, raw, "delivered unchanged, without waiting for the loop")
            XCTAssertFalse(pacer.isHolding)
        }
        XCTAssertEqual(pacer.pacing, .vblank)
        XCTAssertEqual(pacer.flipsPaced, 0)
    }

    /// A driver that completes every flip at once with the atomic helpers' fake vblank event (sequence 0, the time
    /// of completion), and an engine that presents again from every flip callback, as an animation does: without
    /// pacing that is a busy loop. The pacer must bring it down to the refresh rate.
    func testFlipsCompletedAtOnceArePacedAtTheRefreshRate() {
        let (loop, _) = MainLoop.manual(startingAt: t0)
        let pacer = FlipPacer(frameDuration: frame)
        var delivered: [(event: FlipEvent, at: MonotonicInstant)] = []
        var switchReasons: [String] = []
        var buffer = 0
        func presentAndCompleteAtOnce() {
            buffer ^= 1
            // The kernel's event arrives at the next loop iteration, stamped with the time of completion.
            _ = loop.addTimer(after: .zero) {
                let raw = FlipEvent(sequence: 0, timestamp: loop.now, bufferIndex: buffer)
                if let reason = pacer.flipCompleted(raw, on: loop, deliver: { paced in
                    delivered.append((paced, loop.now))
                    presentAndCompleteAtOnce()
                }) { switchReasons.append(reason) }
            }
        }
        presentAndCompleteAtOnce()
        loop.advanceTime(by: .seconds(1))

        XCTAssertEqual(switchReasons, ["the vblank sequence did not advance between two flips (0)"],
                       "switched once, at the fourth flip: three in a row without a vblank")
        XCTAssertTrue(pacer.pacing.isTimer)
        // Three flips at once before the switch, then one per refresh period over the second: 60 ticks at 60 Hz.
        XCTAssertEqual(delivered.count, 63, "flips in one second at 60 Hz")
        XCTAssertTrue(delivered.prefix(3).allSatisfy { $0.at == t0 })
        let paced = delivered.dropFirst(3)
        for (previous, next) in zip(paced, paced.dropFirst()) {
            XCTAssertEqual(next.event.sequence, previous.event.sequence + 1, "one flip per tick, no tick skipped")
            XCTAssertEqual((next.event.timestamp - previous.event.timestamp).nanosecondsClamped, frame.nanosecondsClamped, accuracy: 1)
            XCTAssertEqual(next.at, next.event.timestamp, "delivered at the tick it reports")
        }
        XCTAssertEqual(pacer.flipsPaced, 60)
    }

    func testACompletionSlowerThanAFrameShowsAsASequenceGap() {
        let (loop, _) = MainLoop.manual(startingAt: t0)
        let fresh = FlipPacer(frameDuration: frame)
        fresh.useTimer(reason: "fbdev has no flip events", now: t0)
        fresh.useTimer(reason: "ignored: already on the timer", now: t0 + .seconds(1))
        XCTAssertEqual(fresh.pacing, .timer(reason: "fbdev has no flip events"))
        var delivered: [FlipEvent] = []
        // A panel whose transfer takes 1.5 frames: the completion comes 25 ms after each delivery.
        func transfer() {
            _ = loop.addTimer(after: .milliseconds(25)) {
                fresh.flipCompleted(FlipEvent(sequence: 0, timestamp: loop.now, bufferIndex: 0), on: loop) { paced in
                    delivered.append(paced)
                    transfer()
                }
            }
        }
        transfer()
        loop.advanceTime(by: .milliseconds(500))
        XCTAssertEqual(delivered.map(\.sequence), Array(stride(from: 2, through: 30, by: 2)), "every other tick: a missed vblank each frame")
    }

    func testAHeldCompletionCanBeDeliveredAtOnceOrForgotten() {
        let (loop, _) = MainLoop.manual(startingAt: t0)
        let pacer = FlipPacer(frameDuration: frame)
        pacer.useTimer(reason: "no vblank", now: t0)
        var delivered: [FlipEvent] = []
        pacer.flipCompleted(event(0, at: t0.nanoseconds, buffer: 1), on: loop) { delivered.append($0) }
        XCTAssertTrue(pacer.isHolding)
        XCTAssertTrue(delivered.isEmpty)
        XCTAssertTrue(pacer.deliverHeldNow())
        XCTAssertEqual(delivered, [FlipEvent(sequence: 1, timestamp: t0 + frame, bufferIndex: 1)])
        XCTAssertFalse(pacer.deliverHeldNow())

        pacer.flipCompleted(event(0, at: t0.nanoseconds, buffer: 0), on: loop) { delivered.append($0) }
        pacer.forgetHeld()
        XCTAssertFalse(pacer.isHolding)
        loop.advanceTime(by: .milliseconds(100))
        XCTAssertEqual(delivered.count, 1, "a forgotten completion is never delivered")
    }
}
