import KioskCore
import KioskDisplay
import KioskRender
import XCTest

/// `LayerEngine.captureScreen` copies the compositor's shadow buffer, and only when it holds the frame on screen:
/// at once when nothing is pending, else at the flip that shows it, never a composition still waiting to flip.
final class EngineScreenCaptureTests: XCTestCase {
    /// Premultiplied ARGB words, as `HalvesContent` takes them.
    private let red: UInt32 = 0xFFFF_0000, green: UInt32 = 0xFF00_FF00, blue: UInt32 = 0xFF00_00FF

    private func frontBuffer(_ h: CompositionHarness) throws -> [UInt8] {
        try XCTUnwrap(h.backend.frontBufferSnapshot())
    }

    func testACaptureWithNothingPendingIsTheFrontBufferAtOnce() throws {
        for rotation in [OutputRotation.degrees0, .degrees270] {
            let h = try CompositionHarness(rotation: rotation)
            h.addLayer("a", frame: Rect(x: 2, y: 3, width: 20, height: 10), HalvesContent(left: red, right: blue))
            h.settle()
            var shot: [UInt8]?
            h.engine.captureScreen { shot = $0 }
            XCTAssertEqual(shot, try frontBuffer(h), "\(rotation)°")
            XCTAssertEqual(h.engine.screenshot(), shot, "\(rotation)°")
        }
    }

    func testACaptureWhileAFlipIsPendingWaitsForThatFlip() throws {
        let h = try CompositionHarness(rotation: .degrees90)
        let layer = h.addLayer("a", frame: Rect(x: 2, y: 3, width: 20, height: 10), HalvesContent(red))
        h.settle()
        let before = try frontBuffer(h)

        layer.content = HalvesContent(green)
        h.settleNow()
        XCTAssertTrue(h.backend.isFlipPending, "the green frame is queued")
        XCTAssertNil(h.engine.screenshot(), "the shadow buffer is ahead of the screen")
        var shot: [UInt8]?
        h.engine.captureScreen { shot = $0 }
        XCTAssertNil(shot, "nothing before the flip")
        XCTAssertEqual(try frontBuffer(h), before)

        h.settle()
        let shown = try frontBuffer(h)
        XCTAssertNotEqual(shown, before)
        XCTAssertEqual(shot, shown, "the capture is the frame the flip put on screen")
    }

    func testACompositionNewerThanThePendingFlipIsNotCaptured() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("a", frame: Rect(x: 0, y: 0, width: 30, height: 20), HalvesContent(red))
        h.settle()

        layer.content = HalvesContent(green)
        h.settleNow()
        XCTAssertTrue(h.backend.isFlipPending)
        // Composed while the green frame waits to flip: the shadow buffer is now two frames ahead of the screen.
        layer.content = HalvesContent(blue)
        h.settleNow()
        var captures: [[UInt8]] = []
        h.engine.captureScreen { captures.append($0 ?? []) }

        // The green flip completes; the blue composition is presented from its callback.
        h.poller.advance(to: try XCTUnwrap(h.loop.nextTimerDeadline))
        h.settleNow()
        XCTAssertEqual(h.front(1, 1), 0x00FF00)
        XCTAssertEqual(captures.count, 0, "the shadow buffer holds blue while green is on screen")

        h.settle()
        XCTAssertEqual(h.front(1, 1), 0x0000FF)
        XCTAssertEqual(captures, [try frontBuffer(h)])
    }

    func testNoFrameFlippedYetIsNil() throws {
        let (loop, _) = MainLoop.manual()
        let mode = CompositionHarness.mode
        let engine = try LayerEngine(loop: loop, backend: try HeadlessBackend(mode: mode), compositor: try ShadowCompositor(size: mode.size))
        var answered = false
        engine.captureScreen { pixels in
            XCTAssertNil(pixels)
            answered = true
        }
        XCTAssertTrue(answered)
    }
}
