import KioskCore
import KioskDisplay
import XCTest

/// The repaint window on the manual clock: while something animates, a frame is presented `repaintWindow` before
/// the predicted vblank rather than as soon as it is composed, so a render that lands before the window is shown at
/// that vblank; one that lands inside it goes out at the next. An idle output still presents at once. The window is
/// off unless set (`LayerEngine.repaintWindow`), so each test sets it.
final class RepaintWindowTests: XCTestCase {
    private let frame = EngineHarness.mode.frameDuration
    private let vblank = MonotonicInstant(nanoseconds: 1_000_000_000)

    // MARK: The pure rule

    private func slot(_ now: MonotonicInstant, lead: Duration = .milliseconds(4)) -> RepaintWindow.Slot? {
        RepaintWindow.slot(now: now, lastVblank: vblank, frame: frame, lead: lead)
    }

    func testAFrameReadyMidFrameIsPresentedTheLeadBeforeTheNextVblank() {
        XCTAssertEqual(slot(vblank + .milliseconds(3)),
                       RepaintWindow.Slot(vblank: vblank + frame, presentAt: vblank + frame + (.zero - .milliseconds(4))))
    }

    func testAFrameReadyInsideTheWindowIsPresentedAtOnceForThatVblank() throws {
        let now = vblank + frame + (.zero - .milliseconds(2))
        let slot = try XCTUnwrap(slot(now))
        XCTAssertEqual(slot.vblank, vblank + frame)
        XCTAssertLessThanOrEqual(slot.presentAt, now, "the window is open: at once")
    }

    func testAfterAVblankWithoutAFlipTheOneAfterIsAimedAt() {
        XCTAssertEqual(slot(vblank + frame + .milliseconds(1))?.vblank, vblank + frame * 2)
    }

    func testAnOldVblankOrNoLeadMeansAtOnceWithNoVblankInView() {
        XCTAssertNil(slot(vblank + frame * 2), "two periods without a flip: the timeline is not trusted")
        XCTAssertNil(slot(vblank + .milliseconds(1), lead: .zero))
        XCTAssertNil(slot(vblank + .milliseconds(1), lead: frame))
    }

    func testAFlipLaterThanHalfAFrameAfterItsTargetMissedIt() {
        XCTAssertFalse(RepaintWindow.missed(vblank, flipped: vblank, frame: frame))
        XCTAssertTrue(RepaintWindow.missed(vblank, flipped: vblank + frame, frame: frame))
    }

    func testTheDefaultLeadIsAQuarterFrameAtLeast4MsAndAtMostHalfAFrame() {
        XCTAssertEqual(RepaintWindow.lead(for: frame), frame / 4)
        XCTAssertEqual(RepaintWindow.lead(for: .milliseconds(50)), .microseconds(12500))
        XCTAssertEqual(RepaintWindow.lead(for: .milliseconds(10)), RepaintWindow.defaultLead)
        XCTAssertEqual(RepaintWindow.lead(for: .milliseconds(5)), .microseconds(2500))
    }

    // MARK: The engine

    private final class Ticking {}

    /// An engine flipping at every vblank (an animation that changes nothing), with an 8x8 tile rendered on the main
    /// thread, run until its frames flip steadily. Records each flip's vblank and the tile's colour on screen.
    private final class Animated {
        let h: EngineHarness
        let tile: Layer
        let ticking = Ticking()
        var flips: [(time: MonotonicInstant, pixel: UInt32?)] = []

        init(window: Duration? = nil) throws {
            h = try EngineHarness()
            h.engine.repaintWindow = window ?? RepaintWindow.lead(for: EngineHarness.mode.frameDuration)
            tile = h.addSolidLayer("tile", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
            h.engine.addAnimation(target: ticking) { _, _ in true }
            h.run(for: .milliseconds(100))
            h.engine.onFlip = { [unowned self] event in flips.append((event.timestamp, h.frontPixel(x: 1, y: 1))) }
        }

        /// The vblank of the last completed flip.
        var lastVblank: MonotonicInstant { h.backend.lastFlip!.timestamp }

        /// Sets the tile to `color` at `instant` (a timer stops the manual clock there) and runs until `until`.
        func show(_ color: Color, at instant: MonotonicInstant, runUntil until: MonotonicInstant) {
            let timer = h.loop.addTimer(at: instant) { [tile] in tile.content = SolidContent(color: color) }
            h.run(for: until - h.loop.now)
            timer.cancel()
        }

        /// The first flip that showed `color`.
        func firstShown(_ color: Color) -> MonotonicInstant? { flips.first { $0.pixel == xrgb(color) }?.time }
    }

    func testTheWindowIsOffUnlessSet() throws {
        let h = try EngineHarness()
        XCTAssertEqual(h.engine.repaintWindow, .zero)
        let ticking = Ticking()
        h.engine.addAnimation(target: ticking) { _, _ in true }
        h.run(for: .milliseconds(100))
        h.run(for: .milliseconds(1))
        XCTAssertTrue(h.backend.isFlipPending, "presented as soon as composed")
    }

    func testWhileAnimatingAResultLandingBeforeTheWindowIsShownAtTheNextVblank() throws {
        let a = try Animated()
        let lead = a.h.engine.repaintWindow
        XCTAssertEqual(lead, frame / 4)
        let next = a.lastVblank + frame
        // Mid-frame nothing is queued: the output is free until the window opens.
        a.h.run(for: .milliseconds(2))
        XCTAssertFalse(a.h.backend.isFlipPending, "the frame for the next vblank waits for the window")
        XCTAssertTrue(a.h.engine.hasPendingWork)

        a.show(green, at: next + (.zero - lead) + (.zero - .milliseconds(1)), runUntil: next + frame * 3)
        XCTAssertEqual(a.firstShown(green), next, "rendered 1 ms before the window: shown at that vblank")
        XCTAssertEqual(a.flips.map(\.time), (0..<4).map { next + frame * $0 }, "one flip per vblank, none missed")
    }

    func testWhileAnimatingAResultLandingInsideTheWindowIsShownAtTheVblankAfter() throws {
        let a = try Animated()
        let lead = a.h.engine.repaintWindow
        let next = a.lastVblank + frame
        a.show(green, at: next + (.zero - lead) + .milliseconds(1), runUntil: next + frame * 3)
        XCTAssertEqual(a.firstShown(green), next + frame, "the present for that vblank was out already")
        XCTAssertEqual(a.flips.map(\.time), (0..<4).map { next + frame * $0 })
    }

    func testWithoutAWindowAFlipQueuedAtTheVblankHoldsTheResultBackAFrame() throws {
        let a = try Animated(window: .zero)
        let next = a.lastVblank + frame
        a.h.run(for: .milliseconds(2))
        XCTAssertTrue(a.h.backend.isFlipPending, "presented as soon as composed, right after the vblank")
        a.show(green, at: next + (.zero - .milliseconds(5)), runUntil: next + frame * 3)
        XCTAssertEqual(a.firstShown(green), next + frame)
    }

    func testAPresentThatMissesItsVblankWidensTheWindowUntilTheLatenessDecays() throws {
        let a = try Animated()
        let next = a.lastVblank + frame
        // One copy into the scanout buffer takes 6 ms, more than the 4.2 ms lead: that present misses its vblank.
        var slowCopies = 1
        a.h.compositor.onCopy = { [h = a.h] _ in
            guard slowCopies > 0 else { return }
            slowCopies -= 1
            h.poller.advance(to: h.loop.now + .milliseconds(6))
        }
        a.h.run(for: next + frame - a.h.loop.now)
        XCTAssertEqual(a.flips.map(\.time), [next + frame], "the flip for \(next) came a frame late")

        // Presents now go out at once after each flip, as without a window: nothing is missed.
        a.h.run(for: .milliseconds(1))
        XCTAssertTrue(a.h.backend.isFlipPending, "the window is widened to a whole frame")
        a.h.run(for: frame * 10)
        XCTAssertEqual(a.flips.map(\.time), (1...11).map { next + frame * $0 })

        // The lateness decays by 1/256 a flip: within ten seconds the 4.2 ms window is back.
        a.h.run(for: .seconds(10))
        let following = a.lastVblank + frame
        a.h.run(for: following + .milliseconds(1) - a.h.loop.now)
        XCTAssertEqual(a.lastVblank, following)
        XCTAssertFalse(a.h.backend.isFlipPending, "the present waits for the window again")
        XCTAssertEqual(a.flips.map(\.time), (1...a.flips.count).map { next + frame * $0 }, "no vblank missed meanwhile")
    }

    func testAnIdleOutputPresentsAtOnce() throws {
        let h = try EngineHarness()
        h.engine.repaintWindow = RepaintWindow.lead(for: frame)
        let tile = h.addSolidLayer("tile", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
        h.settle()
        h.run(for: .milliseconds(3))
        tile.content = SolidContent(color: green)
        h.turn()
        XCTAssertTrue(h.backend.isFlipPending, "nothing animates: no window to wait for")
    }
}
