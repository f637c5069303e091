import KioskCore
import KioskDisplay
import XCTest

final class AnimatorEngineTests: XCTestCase {
    func testOpacityAnimationTicksOnFlipsEndsAtTheTargetAndLeavesTheEngineIdle() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("badge", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red)
        h.settle()
        XCTAssertNil(h.loop.nextTimerDeadline, "idle before the animation")
        let presentedBefore = h.stats.framesPresented

        let animator = Animator(engine: h.engine)
        var writes: [Double] = []
        let recordedOpacity = AnimatableProperty<Layer>(
            name: "opacity", componentCount: 1, read: { [$0.opacity] },
            write: { layer, value in
                layer.opacity = value[0]
                writes.append(value[0])
            })
        var completions: [Bool] = []
        try animator.animate(layer, recordedOpacity, to: [0], curve: .basic(duration: 0.25, timing: .linear)) {
            completions.append($0)
        }
        XCTAssertTrue(h.engine.isAnimating, "the animator registered with the display link")

        // Registering is enough for a tick to come: the next iteration presents the unchanged frame and its flip
        // ticks the display link.
        h.settleNow()
        XCTAssertTrue(h.backend.isFlipPending, "an unchanged frame was presented to get a flip")
        XCTAssertNotNil(h.loop.nextTimerDeadline)
        XCTAssertEqual(h.stats.framesPresented, presentedBefore + 1)
        h.completeFlip()
        h.settleNow()
        XCTAssertEqual(writes, [1], "the first tick, after that flip, writes the start value")

        h.run(for: .seconds(1))
        XCTAssertEqual(completions, [true])
        XCTAssertEqual(layer.opacity, 0)
        XCTAssertEqual(writes.last, 0)
        // One write per vblank: each tick steps to its next vblank, one frame (1/60 s) after the previous tick's.
        let step = 1.0 / 60 / 0.25
        XCTAssertGreaterThanOrEqual(writes.count, 16)
        XCTAssertLessThanOrEqual(writes.count, 17)
        for (previous, next) in zip(writes, writes.dropFirst().dropLast()) {
            XCTAssertEqual(previous - next, step, accuracy: 1e-6)
        }
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(.black), "the faded-out layer is gone from the screen")

        XCTAssertEqual(animator.activeCount, 0)
        XCTAssertFalse(h.engine.isAnimating, "the animator deregistered once idle")
        XCTAssertNil(h.loop.nextTimerDeadline, "no flips, no timers")
        let idle = h.stats
        h.run(for: .seconds(2))
        XCTAssertEqual(h.stats.framesPresented, idle.framesPresented)
        XCTAssertEqual(h.stats.loopWakeups, idle.loopWakeups)

        // And it comes back when asked again.
        try animator.animate(layer, .opacity, to: [1], curve: .spring(stiffness: 400, damping: 40))
        XCTAssertTrue(h.engine.isAnimating)
        h.run(for: .seconds(2))
        XCTAssertEqual(layer.opacity, 1)
        XCTAssertFalse(h.engine.isAnimating)
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
    }

    func testAFreedAnimatorLeavesTheDisplayLink() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("badge", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red)
        h.settle()
        do {
            let animator = Animator(engine: h.engine)
            try animator.animate(layer, .position, to: [40, 30], curve: .spring())
            XCTAssertTrue(h.engine.isAnimating)
        }
        XCTAssertFalse(h.engine.isAnimating, "the display link holds its targets weakly")
        h.run(for: .seconds(1))
        XCTAssertNil(h.loop.nextTimerDeadline)
        XCTAssertEqual(layer.frame.x, 0, "nothing stepped it")
    }
}
