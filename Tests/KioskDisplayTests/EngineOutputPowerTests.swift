import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

final class EngineOutputPowerTests: XCTestCase {
    /// Off: over many vblanks nothing is presented or flipped and animations get no ticks, while layers keep
    /// changing and compositions go on. On: one full-screen copy shows the latest state, flips and ticks resume.
    func testPowerOffStopsPresentsAndPowerOnShowsTheLatestState() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("box", frame: Rect(x: 4, y: 4, width: 8, height: 8), HalvesContent(red))
        final class Ticks { var count = 0 }
        let ticks = Ticks()
        h.engine.addAnimation(target: ticks) { ticks, _ in ticks.count += 1; return true }
        h.run(frames: 5)
        XCTAssertGreaterThan(ticks.count, 0, "the animation ticks while the output is lit")
        XCTAssertTrue(h.engine.isOutputPoweredOn)

        try h.engine.setOutputPower(false)
        XCTAssertFalse(h.engine.isOutputPoweredOn)
        XCTAssertFalse(h.backend.isPoweredOn)
        XCTAssertFalse(h.backend.isFlipPending, "the flip pending at power-off completed")
        // The next iteration ticks for that last flip; none come after it.
        h.loop.runOnce(timeout: .zero)
        let before = (stats: h.engine.stats, flips: h.backend.flipsCompleted, presents: h.backend.presentCount, ticks: ticks.count)
        for step in 1...6 {
            layer.frame = Rect(x: 4 + step * 6, y: 20, width: 8, height: 8)
            layer.content = HalvesContent(step.isMultiple(of: 2) ? blue : green)
            h.run(frames: 3)
        }
        let off = h.engine.stats
        XCTAssertEqual(h.backend.flipsCompleted, before.flips, "no flips while off")
        XCTAssertEqual(h.backend.presentCount, before.presents, "no presents while off")
        XCTAssertEqual(off.framesPresented, before.stats.framesPresented, "no frame counts as presented")
        XCTAssertEqual(off.framesFlipped, before.stats.framesFlipped)
        XCTAssertEqual(ticks.count, before.ticks, "animations freeze: the display link gets no ticks")
        XCTAssertGreaterThan(off.framesComposed, before.stats.framesComposed, "compositions go on while off")
        XCTAssertEqual(h.front(6, 6), 0xFF0000, "the screen still holds the frame from before power-off")

        try h.engine.setOutputPower(false)
        h.run(frames: 2)
        XCTAssertEqual(h.engine.stats.framesComposed, off.framesComposed, "switching off twice does nothing")

        h.presented = []
        try h.engine.setOutputPower(true)
        h.run(frames: 3)
        XCTAssertTrue(h.backend.isPoweredOn)
        XCTAssertEqual(h.presented, [[Rect(size: h.panel)]], "one newly composed frame, copied whole")
        XCTAssertEqual(h.frontPixels(0x0000FF), pixels(in: Rect(x: 40, y: 20, width: 8, height: 8)), "the latest state")
        XCTAssertEqual(h.front(6, 6), 0, "the old position was cleared")
        XCTAssertGreaterThan(ticks.count, before.ticks, "ticks resume")
        XCTAssertGreaterThan(h.backend.flipsCompleted, before.flips + 1, "flips resume")

        let composed = h.engine.stats.framesComposed
        try h.engine.setOutputPower(true)
        h.run(frames: 2)
        XCTAssertEqual(h.engine.stats.framesComposed, composed, "switching on twice does not redraw")
        XCTAssertEqual(h.engine.stats.framesPresented, h.backend.presentCount, "every present was counted, none while off")
    }

    /// With nothing animating, a composition made while the output is off is not work under way: the engine goes
    /// quiet instead of waiting for a present that cannot happen.
    func testNothingIsPendingWhileOff() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("box", frame: Rect(x: 4, y: 4, width: 8, height: 8), HalvesContent(red))
        h.settle()
        try h.engine.setOutputPower(false)
        layer.frame = Rect(x: 20, y: 20, width: 8, height: 8)
        h.settle()
        XCTAssertFalse(h.engine.hasPendingWork)
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 4, y: 4, width: 8, height: 8)))
        try h.engine.setOutputPower(true)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 20, y: 20, width: 8, height: 8)))
    }

    /// The headless backend on its own: power-off completes the pending flip, refuses presents and stops the
    /// simulated vblank; power-on accepts presents again, with the vblank counter run on by the clock.
    func testHeadlessBackendPower() throws {
        let (loop, poller) = MainLoop.manual(startingAt: MonotonicInstant(nanoseconds: 1_000_000_000))
        let backend = try HeadlessBackend(mode: CompositionHarness.mode)
        var events: [FlipEvent] = []
        try backend.start(on: loop) { events.append($0) }
        try backend.present(XCTUnwrap(backend.acquireBuffer()), damage: nil)
        try backend.setPower(false)
        XCTAssertEqual(events.count, 1, "the pending flip completed at power-off")
        XCTAssertFalse(backend.isFlipPending)
        let buffer = try XCTUnwrap(backend.acquireBuffer())
        XCTAssertThrowsError(try backend.present(buffer, damage: nil)) { error in
            XCTAssertEqual("\(error)", "Headless-1: present while the output is off")
        }
        poller.advance(by: .seconds(1))
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(events.count, 1)
        try backend.setPower(false)
        try backend.setPower(true)
        try backend.present(buffer, damage: nil)
        _ = loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(events.count, 2)
        XCTAssertGreaterThan(events[1].sequence, events[0].sequence + 50, "a second of vblanks passed while dark")
    }
}
