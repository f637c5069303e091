import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

final class HeadlessBackendTests: XCTestCase {
    private let mode = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)
    private let t0 = MonotonicInstant(nanoseconds: 5_000_000_000)
    private var frame: Duration { mode.frameDuration }

    /// A started backend on a manual clock at `t0`, and the flips it reports with the loop time each arrived at.
    private final class Harness {
        let loop: MainLoop
        let backend: HeadlessBackend
        var flips: [(event: FlipEvent, arrivedAt: MonotonicInstant)] = []
        var onFlip: ((FlipEvent) -> Void)?

        init(mode: OutputMode, bufferCount: Int, start: MonotonicInstant) throws {
            loop = MainLoop.manual(startingAt: start).loop
            backend = try HeadlessBackend(mode: mode, bufferCount: bufferCount)
            try backend.start(on: loop) { [unowned self] event in
                flips.append((event, loop.now))
                onFlip?(event)
            }
        }
    }

    private func vblank(_ k: UInt64) -> MonotonicInstant {
        t0 + .nanoseconds(Int64(k) * frame.nanosecondsClamped)
    }

    func testInfoDescribesTheHeadlessOutput() throws {
        let backend = try HeadlessBackend()
        XCTAssertEqual(backend.info, OutputInfo(device: "headless", driver: "headless", connector: "Headless-1",
                                                mode: OutputMode(width: 1024, height: 768, refreshMilliHz: 60_000),
                                                commitAPI: .headless, bufferCount: 2))
        XCTAssertThrowsError(try HeadlessBackend(bufferCount: 4)) { error in
            XCTAssertEqual("\(error)", "Headless-1: buffer count must be 2 or 3, not 4")
        }
        XCTAssertThrowsError(try HeadlessBackend(mode: OutputMode(width: 0, height: 480, refreshMilliHz: 60_000)))
        XCTAssertNil(backend.acquireBuffer(), "no buffers before start")
        XCTAssertNil(backend.frontBufferSnapshot())
    }

    func testStartShowsBlackAndHandsOutTheOtherBuffer() throws {
        let h = try Harness(mode: mode, bufferCount: 2, start: t0)
        XCTAssertEqual(h.backend.frontBufferSnapshot(), [UInt8](repeating: 0, count: 64 * 48 * 4))
        let buffer = try XCTUnwrap(h.backend.acquireBuffer())
        XCTAssertEqual(buffer.index, 1)
        XCTAssertEqual(buffer.size, mode.size)
        XCTAssertEqual(buffer.stride, 64 * 4)
        XCTAssertTrue(UnsafeRawBufferPointer(start: buffer.base, count: buffer.byteCount).allSatisfy { $0 == 0 })
        XCTAssertNil(h.backend.acquireBuffer(), "with two buffers, one on screen and one acquired, none is free")
        XCTAssertFalse(h.backend.isFlipPending)
        XCTAssertTrue(h.flips.isEmpty, "the modeset buffer is not reported as a flip")
    }

    func testFlipsCompleteAtVblanksWithConsecutiveSequences() throws {
        let h = try Harness(mode: mode, bufferCount: 2, start: t0)
        // Presenting from the flip callback is how a steadily animating kiosk runs: one frame per vblank.
        h.onFlip = { [unowned h] _ in
            guard h.flips.count < 10, let next = h.backend.acquireBuffer() else { return }
            do { try h.backend.present(next, damage: nil) } catch { XCTFail("\(error)") }
        }
        h.loop.advanceTime(by: .milliseconds(3))
        try h.backend.present(XCTUnwrap(h.backend.acquireBuffer()), damage: nil)
        XCTAssertTrue(h.backend.isFlipPending)

        h.loop.advanceTime(to: vblank(1) + .nanoseconds(-1))
        XCTAssertTrue(h.flips.isEmpty, "nothing completes before the vblank")
        h.loop.advanceTime(by: frame * 20)

        XCTAssertEqual(h.flips.map(\.event.sequence), Array(1...10))
        XCTAssertEqual(h.flips.map(\.event.timestamp), (1...10).map { vblank($0) })
        XCTAssertEqual(h.flips.map(\.arrivedAt), (1...10).map { vblank($0) }, "the flip callback runs at the vblank")
        XCTAssertEqual(h.flips.map(\.event.bufferIndex), [1, 0, 1, 0, 1, 0, 1, 0, 1, 0])
        XCTAssertEqual(h.backend.flipsCompleted, 10)
        XCTAssertEqual(h.backend.lastFlip, h.flips.last?.event)
        XCTAssertFalse(h.backend.isFlipPending)
        XCTAssertNil(h.loop.nextTimerDeadline, "an idle headless output schedules nothing")
    }

    func testPresentWhilePendingThrows() throws {
        for count in [2, 3] {
            let h = try Harness(mode: mode, bufferCount: count, start: t0)
            let first = try XCTUnwrap(h.backend.acquireBuffer())
            try h.backend.present(first, damage: [Rect(x: 0, y: 0, width: 8, height: 8)])
            XCTAssertEqual(h.backend.lastPresentedDamage, [Rect(x: 0, y: 0, width: 8, height: 8)])

            XCTAssertThrowsError(try h.backend.present(first, damage: nil)) { error in
                XCTAssertEqual("\(error)", "Headless-1: flip already pending")
            }
            if count == 3 {
                let second = try XCTUnwrap(h.backend.acquireBuffer())
                XCTAssertThrowsError(try h.backend.present(second, damage: nil)) { error in
                    XCTAssertEqual("\(error)", "Headless-1: flip already pending")
                }
            }
            h.loop.advanceTime(by: frame)
            XCTAssertEqual(h.flips.count, 1, "\(count) buffers: the rejected presents queued nothing")
            XCTAssertEqual(h.flips.first?.event.bufferIndex, first.index)
        }
    }

    func testAcquireNeverReturnsTheFrontOrPendingBuffer() throws {
        for count in [2, 3] {
            let h = try Harness(mode: mode, bufferCount: count, start: t0)
            var front = 0
            for step in 0..<12 {
                let buffer = try XCTUnwrap(h.backend.acquireBuffer(), "\(count) buffers, step \(step)")
                XCTAssertNotEqual(buffer.index, front)
                try h.backend.present(buffer, damage: nil)
                let pending = buffer.index

                // While the flip is pending, every buffer still free may be acquired, and none is front or pending.
                var acquired: [PixelBuffer] = []
                for _ in 0..<count {
                    guard let extra = h.backend.acquireBuffer() else { break }
                    XCTAssertFalse([front, pending].contains(extra.index), "\(count) buffers, step \(step)")
                    acquired.append(extra)
                }
                XCTAssertEqual(acquired.count, count - 2, "\(count) buffers, step \(step)")
                // Give back all but one every other step, so a held buffer is also carried across a flip.
                for (i, extra) in acquired.enumerated() where step % 2 == 0 || i > 0 {
                    h.backend.releaseBuffer(extra)
                }
                if step % 2 == 1, let held = acquired.first {
                    h.backend.releaseBuffer(held)
                }

                h.loop.advanceTime(by: frame)
                XCTAssertEqual(h.backend.lastFlip?.bufferIndex, pending)
                front = pending
            }
            XCTAssertEqual(h.backend.flipsCompleted, 12)
        }
    }

    func testPresentingABufferNotHeldThrows() throws {
        let h = try Harness(mode: mode, bufferCount: 2, start: t0)
        let buffer = try XCTUnwrap(h.backend.acquireBuffer())
        try h.backend.present(buffer, damage: nil)
        h.loop.advanceTime(by: frame)
        XCTAssertEqual(h.backend.lastFlip?.bufferIndex, buffer.index)

        XCTAssertThrowsError(try h.backend.present(buffer, damage: nil)) { error in
            XCTAssertEqual("\(error)", "Headless-1: buffer 1 is on screen")
        }
        let other = try XCTUnwrap(h.backend.acquireBuffer())
        h.backend.releaseBuffer(other)
        XCTAssertThrowsError(try h.backend.present(other, damage: nil)) { error in
            XCTAssertEqual("\(error)", "Headless-1: buffer 0 was not acquired")
        }
        let foreign = try HeadlessBackend(mode: mode)
        try foreign.start(on: h.loop) { _ in }
        let stranger = try XCTUnwrap(foreign.acquireBuffer())
        XCTAssertThrowsError(try h.backend.present(stranger, damage: nil)) { error in
            XCTAssertEqual("\(error)", "Headless-1: buffer 1 does not belong to this output")
        }
        XCTAssertFalse(h.backend.isFlipPending)
        foreign.stop()
    }

    func testLatePresentShowsAsSequenceGap() throws {
        let h = try Harness(mode: mode, bufferCount: 2, start: t0)
        try h.backend.present(XCTUnwrap(h.backend.acquireBuffer()), damage: nil)
        h.loop.advanceTime(to: vblank(1))
        XCTAssertEqual(h.flips.map(\.event.sequence), [1])

        // The next frame is ready only after vblank 2 has gone by, so it lands on vblank 3.
        h.loop.advanceTime(to: vblank(2) + .milliseconds(1))
        try h.backend.present(XCTUnwrap(h.backend.acquireBuffer()), damage: nil)
        h.loop.advanceTime(to: vblank(4))
        XCTAssertEqual(h.flips.map(\.event.sequence), [1, 3])
        XCTAssertEqual(h.flips[1].event.sequence - h.flips[0].event.sequence, 2)
        XCTAssertEqual(h.flips[1].event.timestamp, vblank(3))

        // A present exactly at a vblank has missed that one.
        try h.backend.present(XCTUnwrap(h.backend.acquireBuffer()), damage: nil)
        h.loop.advanceTime(to: vblank(6))
        XCTAssertEqual(h.flips.map(\.event.sequence), [1, 3, 5])
    }

    func testFrontBufferSnapshotShowsTheLastFlippedFrame() throws {
        let h = try Harness(mode: mode, bufferCount: 3, start: t0)
        let black = [UInt8](repeating: 0, count: 64 * 48 * 4)
        var frames: [[UInt8]] = []

        for (step, colour) in [Color(rgb: 0xFF0000), Color(rgb: 0x00FF00), Color(rgb: 0x0000FF)].enumerated() {
            let buffer = try XCTUnwrap(h.backend.acquireBuffer())
            try CairoCanvas.withCanvas(on: buffer) { canvas in
                canvas.fill(colour)
                canvas.fill(Rect(x: step * 8, y: 0, width: 8, height: 8), color: .white)
            }
            frames.append(Array(UnsafeRawBufferPointer(start: buffer.base, count: buffer.byteCount)))
            try h.backend.present(buffer, damage: nil)

            let expectedBefore = step == 0 ? black : frames[step - 1]
            XCTAssertEqual(h.backend.frontBufferSnapshot(), expectedBefore, "step \(step): still the previous frame")
            h.loop.advanceTime(by: frame)
            let snapshot = try XCTUnwrap(h.backend.frontBufferSnapshot())
            let diff = compareImages(snapshot, frames[step], size: mode.size, strideA: 64 * 4, strideB: 64 * 4, tolerance: 0)
            XCTAssertTrue(diff.matches, "step \(step): \(diff)")
        }
        // Red with a white corner, read back through the snapshot.
        let red = try XCTUnwrap(frames.first)
        XCTAssertEqual(Array(red[(10 * 4)..<(10 * 4 + 3)]), [0x00, 0x00, 0xFF])
        XCTAssertEqual(Array(red[0..<3]), [0xFF, 0xFF, 0xFF])
    }

    func testStopCompletesThePendingFlipAndFreesBuffers() throws {
        let h = try Harness(mode: mode, bufferCount: 2, start: t0)
        h.loop.advanceTime(by: .milliseconds(20))
        try h.backend.present(XCTUnwrap(h.backend.acquireBuffer()), damage: nil)
        h.onFlip = { [unowned h] _ in
            // A flip callback run by stop cannot queue another frame.
            guard let next = h.backend.acquireBuffer() else { return }
            do {
                try h.backend.present(next, damage: nil)
                XCTFail("present during stop must throw")
            } catch {
                XCTAssertEqual("\(error)", "Headless-1: present while stopping")
            }
        }
        h.backend.stop()

        XCTAssertEqual(h.flips.map(\.event.sequence), [2], "the flip lands at the vblank it was queued for")
        XCTAssertEqual(h.flips.first?.event.timestamp, vblank(2))
        XCTAssertEqual(h.backend.flipsCompleted, 1)
        XCTAssertFalse(h.backend.isFlipPending)
        XCTAssertNil(h.loop.nextTimerDeadline, "no flip timer outlives stop")
        XCTAssertNil(h.backend.frontBufferSnapshot())
        XCTAssertNil(h.backend.acquireBuffer())
        XCTAssertThrowsError(try h.backend.present(PixelBuffer(index: 0, base: UnsafeMutableRawPointer(bitPattern: 64)!,
                                                               size: mode.size, stride: 256), damage: nil)) { error in
            XCTAssertEqual("\(error)", "Headless-1: present before start")
        }
        h.loop.advanceTime(by: frame * 3)
        XCTAssertEqual(h.flips.count, 1)
    }

    func testADrawnFrameIsShownThroughTheBackend() throws {
        let h = try Harness(mode: mode, bufferCount: 2, start: t0)
        let buffer = try XCTUnwrap(h.backend.acquireBuffer())
        var expected = [UInt8](repeating: 0, count: mode.width * mode.height * 4)
        for y in 0..<mode.height {
            for x in 0..<mode.width {
                let word = UInt32(truncatingIfNeeded: 0xFF00_0000 | (x * 4) << 16 | (y * 3) << 8 | (x ^ y))
                buffer.base.storeBytes(of: word, toByteOffset: y * buffer.stride + x * 4, as: UInt32.self)
                withUnsafeBytes(of: word.littleEndian) { expected.replaceSubrange((y * mode.width + x) * 4..<(y * mode.width + x) * 4 + 4, with: $0) }
            }
        }
        try h.backend.present(buffer, damage: nil)
        h.loop.advanceTime(by: frame)
        let snapshot = try XCTUnwrap(h.backend.frontBufferSnapshot())
        let diff = snapshot.withUnsafeBytes { a in expected.withUnsafeBytes { b in
            compareImages(a, b, size: mode.size, strideA: mode.width * 4, strideB: mode.width * 4, tolerance: 0)
        } }
        XCTAssertTrue(diff.matches, "\(diff)")
        XCTAssertFalse(snapshot.allSatisfy { $0 == 0 })
    }
}
