import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// The repaint window on the manual clock: while something animates, a frame is presented `repaintWindow` before
/// the predicted vblank rather than as soon as it is composed, so a render that lands before the window is shown at
/// that vblank; one that lands inside it goes out at the next. An idle output still presents at once. The window is
/// off unless set (`LayerEngine.repaintWindow`, as in kioskd), so each test sets it.
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
            h.listeners.append(h.engine.addFlipListener { [unowned self] event in flips.append((event.timestamp, h.frontPixel(x: 1, y: 1))) })
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

    /// `expectedVblank(forChangeAt:)` names the vblank a change made then is shown at, in each case above: before
    /// the window, inside it, with no window while a flip is on its way, and on an idle output.
    func testTheEngineSaysAtWhichVblankAChangeMadeNowIsShown() throws {
        for (window, offset, shownAfter) in [(nil, -5.0, 0), (nil, -3.0, 1), (Duration.zero, -5.0, 1)] as [(Duration?, Double, Int)] {
            let a = try Animated(window: window)
            let next = a.lastVblank + frame
            var expected: MonotonicInstant?
            let at = next + .microseconds(Int64(offset * 1000))
            let timer = a.h.loop.addTimer(at: at) { [h = a.h, tile = a.tile] in
                expected = h.engine.expectedVblank(forChangeAt: h.loop.now)
                tile.content = SolidContent(color: green)
            }
            a.h.run(for: next + frame * 3 - a.h.loop.now)
            timer.cancel()
            XCTAssertEqual(a.firstShown(green), next + frame * shownAfter, "window \(String(describing: window)), \(offset) ms")
            XCTAssertEqual(expected, a.firstShown(green), "window \(String(describing: window)), \(offset) ms: as predicted")
        }
        // Idle: a change goes out at once and is shown at the first vblank after it.
        let h = try EngineHarness()
        let tile = h.addSolidLayer("tile", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
        h.run(for: .milliseconds(100))
        XCTAssertFalse(h.backend.isFlipPending)
        let last = try XCTUnwrap(h.backend.lastFlip?.timestamp)
        let expected = h.engine.expectedVblank(forChangeAt: h.loop.now)
        tile.content = SolidContent(color: green)
        var shown: MonotonicInstant?
        h.listeners.append(h.engine.addFlipListener { [h] event in if shown == nil, h.frontPixel(x: 1, y: 1) == xrgb(green) { shown = event.timestamp } })
        h.run(for: frame * 3)
        XCTAssertNotNil(shown)
        XCTAssertEqual(expected, shown)
        XCTAssertGreaterThan(shown ?? last, last)
    }

    /// A loop woken late, past the vblank a pending flip was aimed at, with the flip's event not read yet: the flip
    /// has landed, and a change made then goes out as soon as the event is read, at the first vblank after now,
    /// not a vblank later.
    func testAChangeMadeWhenAPendingFlipsVblankHasPassedIsShownAtTheNextVblank() throws {
        let a = try Animated(window: .zero)
        let next = a.lastVblank + frame
        var expected: MonotonicInstant?
        var pendingThen = false
        let timer = a.h.loop.addTimer(at: next + (.zero - .milliseconds(5))) { [h = a.h, tile = a.tile] in
            // The loop stalls 8 ms: the vblank at `next` passes while it runs.
            h.poller.advance(to: next + .milliseconds(3))
            pendingThen = h.backend.isFlipPending
            expected = h.engine.expectedVblank(forChangeAt: h.loop.now)
            tile.content = SolidContent(color: green)
        }
        a.h.run(for: next + frame * 4 - a.h.loop.now)
        timer.cancel()
        XCTAssertTrue(pendingThen, "the flip for the passed vblank was still pending as the change was made")
        XCTAssertEqual(a.firstShown(green), next + frame)
        XCTAssertEqual(expected, a.firstShown(green), "as predicted")
    }

    /// Makes the next `count` copies into a scanout buffer take `duration` on the manual clock.
    private func slowCopies(_ a: Animated, _ count: Int, taking duration: Duration) {
        var left = count
        a.h.compositor.onCopy = { [h = a.h] _ in
            guard left > 0 else { return }
            left -= 1
            h.poller.advance(to: h.loop.now + duration)
        }
    }

    func testASlowCopyMakesThePresentLateClosesTheWindowAndWidensTheLeadForWhenItReopens() throws {
        let a = try Animated()
        let next = a.lastVblank + frame
        // One copy into the scanout buffer takes 6 ms, more than the 4.2 ms lead: that present goes out after its
        // vblank (a near miss, with less than nothing left) and misses it.
        slowCopies(a, 1, taking: .milliseconds(6))
        a.h.run(for: next + frame - a.h.loop.now)
        XCTAssertEqual(a.flips.map(\.time), [next + frame], "the flip for \(next) came a frame late")
        XCTAssertEqual(a.h.engine.repaintWindowNearMisses, 1)
        XCTAssertEqual(a.h.stats.repaintWindowNearMisses, 1)
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 1)
        XCTAssertEqual(a.h.stats.repaintWindowMisses, 1)

        // Closed for the first hold: presents go out at once after each flip, and no vblank is missed.
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "closed by the near miss")
        XCTAssertEqual(a.h.stats.repaintWindowMs, 0)
        a.h.run(for: frame + .milliseconds(1))
        XCTAssertTrue(a.h.backend.isFlipPending, "presented at once while closed")
        a.h.run(for: RepaintWindow.firstHold)
        // Open again, with the late present's 6 ms and the 1 ms margin as its lead, less the lateness' decay over the
        // second's flips (1/1024 a flip: about 0.35 ms).
        XCTAssertGreaterThan(a.h.engine.repaintLead, .microseconds(6500))
        XCTAssertLessThanOrEqual(a.h.engine.repaintLead, .milliseconds(7))
        let following = a.lastVblank + frame
        a.h.run(for: following + .milliseconds(1) - a.h.loop.now)
        XCTAssertFalse(a.h.backend.isFlipPending, "the present waits for the window again")
        a.h.run(for: frame * 10)
        XCTAssertEqual(a.flips.map(\.time), (1...a.flips.count).map { next + frame * $0 }, "no vblank missed since")
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 1)
        XCTAssertEqual(a.h.engine.repaintWindowNearMisses, 1)
    }

    /// Makes the loop wake `late` after the next window opens (a loaded machine, an emulated CPU), with the work as
    /// fast as ever: a timer just before the opening moves the manual clock past it. Returns the opening.
    @discardableResult
    private func wakeLate(_ a: Animated, by late: Duration) -> MonotonicInstant {
        let opening = a.lastVblank + frame + (.zero - a.h.engine.repaintLead)
        let timer = a.h.loop.addTimer(at: opening + (.zero - .microseconds(100))) { [h = a.h] in
            h.poller.advance(by: late + .microseconds(100))
        }
        a.h.run(for: a.lastVblank + frame + .milliseconds(1) - a.h.loop.now)
        timer.cancel()
        return opening
    }

    func testALoopWakingWithinACloseCallOfTheVblankClosesTheWindowBeforeAnyVblankIsMissed() throws {
        let a = try Animated()
        let lead = a.h.engine.repaintLead
        XCTAssertEqual(lead, RepaintWindow.lead(for: frame))
        let next = a.lastVblank + frame
        // 3.5 ms late for the 4.2 ms lead: the present leaves 0.67 ms before its vblank, less than the 1.04 ms close
        // call. It still makes its vblank, but the next one as late would not.
        wakeLate(a, by: .microseconds(3500))
        XCTAssertEqual(a.flips.last?.time, next, "the near miss made its vblank")
        XCTAssertEqual(a.h.engine.repaintWindowNearMisses, 1)
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 0)
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "the near miss closed the window")
        // While closed the loop may wake late again: presents go out at once, so nothing waits for it.
        a.h.run(for: RepaintWindow.firstHold + (.zero - frame * 2))
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "still closed within the hold")
        XCTAssertEqual(a.flips.map(\.time), (0..<a.flips.count).map { next + frame * $0 }, "no vblank missed")
        a.h.run(for: frame * 3)
        XCTAssertGreaterThan(a.h.engine.repaintLead, lead, "open again after the hold, the lead widened by the lateness")
    }

    func testALoopWakingALittleLateKeepsTheWindowOpen() throws {
        let a = try Animated()
        // 1 ms late for the 4.2 ms lead: the window stays, its lead widened to the lateness and margin.
        wakeLate(a, by: .milliseconds(1))
        XCTAssertEqual(a.h.engine.repaintWindowNearMisses, 0)
        XCTAssertEqual(a.h.engine.repaintLead, RepaintWindow.lead(for: frame), "1 ms and the margin is under the lead")
        let following = a.lastVblank + frame
        a.h.run(for: following + .milliseconds(1) - a.h.loop.now)
        XCTAssertFalse(a.h.backend.isFlipPending, "the present waits for the window")
    }

    func testALoopWakingAfterTheVblankItWaitedForClosesTheWindowAndPresentsAtOnce() throws {
        let a = try Animated()
        let next = a.lastVblank + frame
        // The loop sleeps through the window and the vblank (1 ms past it): that vblank has no flip. The present
        // goes out at once for the one after, rather than waiting for that one's window, and the window closes.
        wakeLate(a, by: a.h.engine.repaintLead + .milliseconds(1))
        XCTAssertTrue(a.h.backend.isFlipPending, "presented at once, not waiting for the next window")
        XCTAssertEqual(a.h.engine.repaintWindowNearMisses, 1)
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "closed")
        a.h.run(for: frame * 3)
        XCTAssertEqual(a.flips.first?.time, next + frame, "the vblank slept through is lost")
        XCTAssertEqual(a.flips.map(\.time), (0..<a.flips.count).map { next + frame * ($0 + 1) }, "none lost since")
    }

    func testANearMissLeavesLessThanACloseCallBeforeTheVblank() {
        XCTAssertEqual(RepaintWindow.closeCall(for: frame), frame / 16, "1.04 ms at 60 Hz")
        XCTAssertEqual(RepaintWindow.closeCall(for: .milliseconds(50)), .microseconds(3125), "3.1 ms at 20 Hz")
        XCTAssertEqual(RepaintWindow.closeCall(for: .milliseconds(8)), .milliseconds(1), "1 ms at least")
        let call = RepaintWindow.closeCall(for: frame)
        XCTAssertFalse(RepaintWindow.isNearMiss(slack: call, frame: frame))
        XCTAssertTrue(RepaintWindow.isNearMiss(slack: call + (.zero - .microseconds(1)), frame: frame))
        XCTAssertTrue(RepaintWindow.isNearMiss(slack: .zero - .milliseconds(3), frame: frame), "after the vblank")
        XCTAssertFalse(RepaintWindow.isNearMiss(slack: .milliseconds(2), frame: frame))
    }

    /// A present late against the window's own estimate (the loop woke more than half the lead late, which the
    /// first self-closing rule took as late) that still leaves more than the close call makes its vblank, and the
    /// window stays open.
    func testAPresentThatJustMakesItsVblankKeepsTheWindowOpen() throws {
        let a = try Animated()
        let lead = a.h.engine.repaintLead
        let next = a.lastVblank + frame
        // 2.5 ms late for the 4.2 ms lead: 1.67 ms left, more than the 1.04 ms close call.
        wakeLate(a, by: .microseconds(2500))
        XCTAssertEqual(a.flips.last?.time, next, "made its vblank")
        XCTAssertEqual(a.h.engine.repaintWindowNearMisses, 0)
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 0)
        XCTAssertEqual(a.h.engine.repaintLead, lead, "open, at the configured lead (2.5 ms and the margin is less)")
        let following = a.lastVblank + frame
        a.h.run(for: following + .milliseconds(1) - a.h.loop.now)
        XCTAssertFalse(a.h.backend.isFlipPending, "the present waits for the window")
        a.h.run(for: frame * 10)
        XCTAssertEqual(a.flips.map(\.time), (0..<a.flips.count).map { next + frame * $0 }, "no vblank missed")
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 0)
    }

    /// An animating engine over `FaultInjectingBackend`, with the window `auto`: its commits can reach the
    /// simulated hardware late (`commitDelays`), as a nonblocking commit's kernel worker that runs after the vblank
    /// does, though the present left in its window with its lead to spare.
    private final class LateCommits {
        let loop: MainLoop
        let poller: ManualPoller
        let backend: FaultInjectingBackend
        let pool = RenderQueuePool(strategy: .manual)
        let engine: LayerEngine
        let ticking = Ticking()
        var flips: [MonotonicInstant] = []
        private var listeners: [ListenerToken] = []

        init() throws {
            (loop, poller) = MainLoop.manual()
            backend = try FaultInjectingBackend(mode: EngineHarness.mode)
            engine = try LayerEngine(loop: loop, backend: backend, compositor: RecordingCompositor(size: EngineHarness.mode.size),
                                     pool: pool)
            engine.repaintWindowMode = .auto
            engine.rootLayer.addChild(Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: SolidContent(color: red),
                                            name: "tile"))
            try engine.start()
            engine.addAnimation(target: ticking) { _, _ in true }
            run(for: .milliseconds(100))
            listeners.append(engine.addFlipListener { [unowned self] in flips.append($0.timestamp) })
        }

        func run(for duration: Duration) {
            runManualTime(loop, poller, for: duration, settlingAtEnd: false) {
                for _ in 0..<1000 {
                    let wakeups = loop.wakeups
                    loop.runOnce(timeout: .zero)
                    if pool.runQueued() > 0 { continue }
                    if loop.wakeups == wakeups && engine.transaction.isEmpty { return }
                }
                XCTFail("the loop never went quiet")
            }
        }

        var lastVblank: MonotonicInstant { backend.headless.lastFlip!.timestamp }

        /// Runs until the window's next present is made, its commit reaching the hardware `late` after the vblank
        /// it aims at, and then three frames more. Returns that vblank.
        func commitLate(by late: Duration, frame: Duration) -> MonotonicInstant {
            run(for: .milliseconds(1))
            XCTAssertFalse(backend.isFlipPending, "the present for the next vblank waits for its window")
            XCTAssertEqual(engine.repaintLead, RepaintWindow.lead(for: frame))
            let target = lastVblank + frame
            backend.commitDelays[backend.presentCalls + 1] = engine.repaintLead + late
            run(for: target + frame * 3 - loop.now)
            return target
        }
    }

    func testACommitThatJustMissesItsVblankClosesTheWindow() throws {
        let r = try LateCommits()
        let target = r.commitLate(by: .microseconds(100), frame: frame)
        XCTAssertEqual(r.flips.first, target + frame, "the commit reached the hardware 0.1 ms after its vblank")
        XCTAssertEqual(r.engine.repaintWindowMisses, 1)
        XCTAssertEqual(r.engine.repaintWindowNearMisses, 0, "the present itself left with its lead to spare")
        XCTAssertEqual(r.engine.repaintLead, .zero, "the miss closed the window")
        XCTAssertEqual(r.flips.dropFirst().map { $0 }, (1..<r.flips.count).map { target + frame * ($0 + 1) },
                       "one flip per vblank since, presented at once")
    }

    func testACommitThatMissesItsVblankByAFrameClosesTheWindow() throws {
        let r = try LateCommits()
        let target = r.commitLate(by: frame + .microseconds(100), frame: frame)
        XCTAssertEqual(r.flips.first, target + frame * 2, "the commit reached the hardware a frame after its vblank")
        XCTAssertEqual(r.engine.repaintWindowMisses, 1)
        XCTAssertEqual(r.engine.repaintLead, .zero, "the miss closed the window")
        r.run(for: RepaintWindow.firstHold)
        XCTAssertEqual(r.engine.repaintLead, RepaintWindow.lead(for: frame), "open again after the first hold")
        XCTAssertEqual(r.engine.repaintWindowMisses, 1)
    }

    func testAfterItsHoldTheWindowWaitsForAQuietStretchOfFlipsAtEveryVblank() throws {
        let r = try LateCommits()
        _ = r.commitLate(by: .microseconds(100), frame: frame)
        XCTAssertEqual(r.engine.repaintWindowMisses, 1)
        XCTAssertEqual(r.engine.repaintLead, .zero, "closed by the miss")
        // Presents at once keep missing too (each commit reaches the hardware a frame late): the machine cannot keep
        // time, and the window stays closed after its hold.
        let first = r.backend.presentCalls + 1
        for n in first..<(first + 200) { r.backend.commitDelays[n] = frame + .microseconds(100) }
        r.run(for: RepaintWindow.firstHold + frame * 6)
        XCTAssertGreaterThan(r.backend.presentCalls, first + 20, "presents went on, a vblank missed at each")
        XCTAssertEqual(r.engine.repaintLead, .zero, "the hold has passed, but no quiet stretch yet")
        XCTAssertEqual(r.engine.repaintWindowMisses, 1, "closed, so no window miss")
        // The commits reach the hardware in time again: after half a second of flips at every vblank it opens.
        r.backend.commitDelays = [:]
        r.run(for: RepaintWindow.quietStretch + (.zero - frame * 3))
        XCTAssertEqual(r.engine.repaintLead, .zero, "not yet half a second of flips in a row")
        r.run(for: frame * 6)
        XCTAssertEqual(r.engine.repaintLead, RepaintWindow.lead(for: frame), "open after the quiet stretch")
    }

    func testACommitThatReachesTheHardwareJustInTimeKeepsTheWindowOpen() throws {
        let r = try LateCommits()
        let target = r.commitLate(by: .zero - .microseconds(100), frame: frame)
        XCTAssertEqual(r.flips.first, target, "the commit reached the hardware 0.1 ms before its vblank")
        XCTAssertEqual(r.engine.repaintWindowMisses, 0)
        XCTAssertEqual(r.engine.repaintLead, RepaintWindow.lead(for: frame), "still open")
        XCTAssertEqual(r.flips, (0..<r.flips.count).map { target + frame * $0 }, "one flip per vblank")
    }

    func testAWorkHeavyCommitWidensTheLeadBeforeAnyPresentIsLate() throws {
        // On an idle output a present goes out at once; one whose copy takes 5 ms teaches the lead (6 ms with the
        // margin) before any present made in a window could be late.
        let h = try EngineHarness()
        h.engine.repaintWindow = RepaintWindow.lead(for: frame)
        let tile = h.addSolidLayer("tile", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
        h.settle()
        XCTAssertEqual(h.engine.repaintLead, h.engine.repaintWindow)
        var slow = true
        h.compositor.onCopy = { _ in
            guard slow else { return }
            slow = false
            h.poller.advance(to: h.loop.now + .milliseconds(5))
        }
        tile.content = SolidContent(color: green)
        h.settle()
        XCTAssertFalse(slow, "the copy ran")
        // 5 ms and the margin, less the work cost's decay over the one flip since.
        XCTAssertEqual(Double(h.engine.repaintLead.nanosecondsClamped) / 1e6, 5 - 5.0 / 64 + 1, accuracy: 0.01)
    }

    func testAHeavyCompositionFarFromTheWindowWidensTheLeadForAboutASecondOnly() throws {
        // A result lands three leads before the window and its composition takes 6 ms (a new page composed whole): it
        // is done before the window opens, so nothing is late, and the lead widens to 7 ms for the frames that follow.
        let a = try Animated()
        let configured = a.h.engine.repaintWindow
        let next = a.lastVblank + frame
        a.h.run(for: .milliseconds(1))
        var slow = true
        a.h.compositor.onCompose = { [h = a.h] _ in
            guard slow else { return }
            slow = false
            h.poller.advance(to: h.loop.now + .milliseconds(6))
        }
        a.show(green, at: next + (.zero - configured * 3), runUntil: next + .milliseconds(1))
        XCTAssertFalse(slow, "the composition ran")
        XCTAssertEqual(a.firstShown(green), next, "composed before its window, and shown at that vblank")
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 0)
        // 6 ms and the margin, less one flip's decay.
        XCTAssertEqual(Double(a.h.engine.repaintLead.nanosecondsClamped) / 1e6, 6 - 6.0 / 64 + 1, accuracy: 0.01)

        // One commit says little about the frames after it: within a second of light frames the lead is the
        // configured one again (a late present, by contrast, is remembered for many seconds: the test above).
        a.h.run(for: .seconds(1))
        XCTAssertEqual(a.h.engine.repaintLead, configured)
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 0)
        XCTAssertEqual(a.flips.map(\.time), (0..<a.flips.count).map { next + frame * $0 }, "no vblank missed")
    }

    func testEachCloseWithinTheSettleTimeDoublesTheHold() throws {
        let a = try Animated()
        // A copy longer than the lead: the present goes out late and misses; the window closes on it.
        func miss() {
            slowCopies(a, 1, taking: a.h.engine.repaintLead + .milliseconds(2))
            a.h.run(for: frame * 3)
        }
        miss()
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 1)
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "closed for the first hold")
        let heldFlips = a.flips.count
        a.h.run(for: frame * 10)
        XCTAssertEqual(a.flips.count, heldFlips + 10, "one flip per vblank while held")
        a.h.run(for: RepaintWindow.firstHold)
        XCTAssertGreaterThan(a.h.engine.repaintLead, .zero, "open again after one second")
        miss()
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 2)
        let closedAt = a.h.loop.now
        a.h.run(for: RepaintWindow.firstHold + frame * 2)
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "held for two seconds this time")
        a.h.run(for: closedAt + RepaintWindow.firstHold * 2 + frame * 2 - a.h.loop.now)
        XCTAssertGreaterThan(a.h.engine.repaintLead, .zero, "open again after two seconds")
        // A close long after the one before holds for the first hold again.
        a.h.run(for: RepaintWindow.settleTime + frame)
        miss()
        XCTAssertEqual(a.h.engine.repaintWindowMisses, 3)
        XCTAssertEqual(a.h.engine.repaintLead, .zero, "closed")
        a.h.run(for: RepaintWindow.firstHold + frame)
        XCTAssertGreaterThan(a.h.engine.repaintLead, .zero, "open again after one second")
    }

    func testWhileAPresentWaitsForItsWindowWhatLandsIsComposedWhenTheWindowOpens() throws {
        let a = try Animated()
        let lead = a.h.engine.repaintWindow
        let next = a.lastVblank + frame
        a.h.run(for: .milliseconds(2))
        let composed = a.h.stats.framesComposed
        a.show(green, at: next + (.zero - lead) + (.zero - .milliseconds(3)), runUntil: next + (.zero - lead) + (.zero - .milliseconds(1)))
        XCTAssertEqual(a.h.stats.framesComposed, composed, "nothing composed before the window opens")
        XCTAssertFalse(a.h.backend.isFlipPending)
        a.h.run(for: next + frame * 2 - a.h.loop.now)
        XCTAssertEqual(a.h.stats.framesComposed, composed + 1, "composed once, when the window opened")
        XCTAssertEqual(a.firstShown(green), next, "and shown at that vblank")
    }

    func testAResultLandingFarFromTheWindowIsComposedAtOnceAndTheWindowOnlyPresents() throws {
        let a = try Animated()
        let lead = a.h.engine.repaintWindow
        let next = a.lastVblank + frame
        a.h.run(for: .milliseconds(1))
        let composed = a.h.stats.framesComposed
        // Two leads before the window: composing now is done long before it opens.
        a.show(green, at: next + (.zero - lead * 3), runUntil: next + (.zero - lead * 3) + .microseconds(10))
        XCTAssertEqual(a.h.stats.framesComposed, composed + 1, "composed as it landed")
        XCTAssertFalse(a.h.backend.isFlipPending, "the present still waits for the window")
        a.h.run(for: next + frame - a.h.loop.now)
        XCTAssertEqual(a.h.stats.framesComposed, composed + 1, "nothing composed again at the window")
        XCTAssertEqual(a.firstShown(green), next)
    }

    func testTheWindowModeReadsAsTheConfigSpellsIt() {
        XCTAssertEqual(RepaintWindow.Mode("auto"), .auto)
        XCTAssertEqual(RepaintWindow.Mode("off"), .off)
        XCTAssertEqual(RepaintWindow.Mode("0"), .off)
        XCTAssertEqual(RepaintWindow.Mode("6"), .lead(.milliseconds(6)))
        XCTAssertEqual(RepaintWindow.Mode("2.5"), .lead(.microseconds(2500)))
        for bad in ["", "soon", "-1", "1000", "nan"] { XCTAssertNil(RepaintWindow.Mode(bad), bad) }
        XCTAssertEqual(RepaintWindow.Mode.auto.lead(for: frame), frame / 4)
        XCTAssertEqual(RepaintWindow.Mode.off.lead(for: frame), .zero)
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
