import Glibc
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// Every errno class of a failed present, a flip that never completes and a device that goes away, injected with
/// `FaultInjectingBackend` on the manual clock. Each test checks the screen (the front buffer), the counters, the
/// `error` events, the fatal error where kioskd must exit, and that waiting costs a bounded number of iterations.
final class PresentFaultTests: XCTestCase {
    /// A started engine on a manual clock, over the fault-injecting backend, with one 16x16 layer at the origin.
    private final class Harness {
        let loop: MainLoop
        let poller: ManualPoller
        let backend: FaultInjectingBackend
        let compositor: RecordingCompositor
        let pool = RenderQueuePool(strategy: .manual)
        let engine: LayerEngine
        let layer: Layer
        var faults: [FrameFault] = []
        var fatal: FatalFrameError?
        private var listeners: [ListenerToken] = []

        /// - mode, modes: the output's mode and its connector's modes (see `FaultInjectingBackend`).
        init(mode: OutputMode = EngineHarness.mode, modes: [OutputMode]? = nil) throws {
            (loop, poller) = MainLoop.manual()
            backend = try FaultInjectingBackend(mode: mode, modes: modes)
            compositor = RecordingCompositor(size: EngineHarness.mode.size)
            engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
            layer = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 16), content: SolidContent(color: red), name: "tile")
            engine.rootLayer.addChild(layer)
            listeners = [
                engine.addFaultListener { [unowned self] in faults.append($0) },
                engine.addFatalListener { [unowned self] in fatal = $0 },
            ]
            try engine.start()
        }

        func settleNow() {
            for _ in 0..<1000 {
                let wakeups = loop.wakeups
                loop.runOnce(timeout: .zero)
                if pool.runQueued() > 0 { continue }
                if loop.wakeups == wakeups && engine.transaction.isEmpty { return }
            }
            XCTFail("the loop never went quiet")
        }

        /// Runs `duration` of manual time; returns the loop iterations it took.
        @discardableResult
        func run(for duration: Duration) -> Int {
            let before = loop.iterations
            runManualTime(loop, poller, for: duration, settlingAtEnd: true) { settleNow() }
            return loop.iterations - before
        }

        func show(_ color: Color) { layer.content = SolidContent(color: color) }

        var frontPixel: UInt32? {
            guard let bytes = backend.frontBufferSnapshot() else { return nil }
            return bytes[4..<8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        }
    }

    /// The frames a 100 ms wait may take at most: a turn per vblank, timer and render, with room to spare. A busy
    /// loop would take thousands.
    private let iterationBound = 40

    func testErrnoClassesMapToTheirPolicies() {
        XCTAssertEqual(PresentFailure.policy(for: EBUSY), .retryAtNextVblank)
        XCTAssertEqual(PresentFailure.policy(for: EAGAIN), .retryAtNextVblank)
        XCTAssertEqual(PresentFailure.policy(for: nil), .retryAtNextVblank)
        XCTAssertEqual(PresentFailure.policy(for: EACCES), .regainMaster)
        XCTAssertEqual(PresentFailure.policy(for: EPERM), .regainMaster)
        XCTAssertEqual(PresentFailure.policy(for: ENODEV), .exit)
        XCTAssertEqual(PresentFailure.policy(for: EINVAL), .fallBack)
        XCTAssertEqual(PresentFailure.policy(for: ENOSPC), .fallBack)
        let failure = PresentFailure(OutputError("connector Virtual-1: atomic commit failed: EBUSY", errno: EBUSY))
        XCTAssertEqual(failure.errnoName, "EBUSY")
        XCTAssertEqual(failure.message, "connector Virtual-1: atomic commit failed: EBUSY")
        XCTAssertEqual(PresentFailure(OutputError("flip already pending")).errnoName, "unknown")
    }

    func testEBUSYGivesTheBufferBackAndRetriesAtTheNextVblank() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        XCTAssertEqual(h.frontPixel, xrgb(red))
        h.backend.presentFaults = [h.backend.presentCalls + 1: EBUSY]
        h.show(green)
        h.settleNow()
        XCTAssertEqual(h.backend.buffersOut, 0, "the buffer of the failed present was given back")
        XCTAssertEqual(h.engine.stats.presentFailures, ["EBUSY": 1])
        XCTAssertEqual(h.engine.stats.presentRetries, 1)
        XCTAssertEqual(h.faults.map(\.code), [.presentFailed])
        XCTAssertTrue(h.faults[0].message.contains("Headless-1") && h.faults[0].message.contains("EBUSY"), h.faults[0].message)

        let iterations = h.run(for: .milliseconds(100))
        XCTAssertEqual(h.frontPixel, xrgb(green), "the retry put the frame on screen")
        XCTAssertLessThan(iterations, iterationBound)
        h.show(blue)
        h.run(for: .milliseconds(50))
        XCTAssertEqual(h.frontPixel, xrgb(blue), "no freeze: later frames go out too")
        XCTAssertNil(h.fatal)
        XCTAssertTrue(h.engine.stats.healthy)
    }

    func testEveryPresentFailingNeverStarvesTheBuffers() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        let first = h.backend.presentCalls + 1
        h.backend.presentFaults = Dictionary(uniqueKeysWithValues: (first..<first + 5).map { ($0, EBUSY) })
        h.show(green)
        let iterations = h.run(for: .milliseconds(200))
        XCTAssertEqual(h.engine.stats.presentFailures["EBUSY"], 5)
        XCTAssertEqual(h.frontPixel, xrgb(green), "acquireBuffer still finds a buffer after five failures")
        XCTAssertLessThan(iterations, iterationBound * 2)
    }

    func testMasterLostStopsPresentingKeepsStateAndRedrawsFullyOnceRegained() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.presentFaults = [h.backend.presentCalls + 1: EACCES]
        h.backend.reacquireRefusals = 3
        h.show(green)
        h.settleNow()
        XCTAssertEqual(h.engine.stats.masterLost, 1)
        XCTAssertEqual(h.engine.stats.presentFailures, ["EACCES": 1])
        XCTAssertEqual(h.faults.map(\.code), [.masterLost])
        XCTAssertEqual(h.backend.buffersOut, 0)

        // While another master holds the device: nothing is presented, renders and compositions go on.
        let presents = h.backend.presentCalls
        h.show(blue)
        let iterations = h.run(for: .milliseconds(300))
        XCTAssertEqual(h.backend.presentCalls, presents, "no present while master is lost")
        XCTAssertEqual(h.frontPixel, xrgb(red), "the screen keeps what it showed")
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(blue), "the scene kept changing")
        XCTAssertTrue(h.engine.stats.healthy, "waiting for master is not a reason to restart")
        XCTAssertEqual(h.engine.stats.healthReason, "waiting for DRM master")
        XCTAssertLessThan(iterations, iterationBound, "attempts back off; no busy loop")

        // Master is free again after three refusals: taken within a second of losing it, then a full redraw.
        h.run(for: .milliseconds(700))
        XCTAssertEqual(h.backend.reacquireCalls, 4)
        XCTAssertEqual(h.frontPixel, xrgb(blue))
        let fullScreen = Rect(size: EngineHarness.mode.size)
        XCTAssertEqual(h.compositor.copyCalls.last?.rects, [fullScreen], "the whole screen is copied after a modeset")
        XCTAssertNil(h.fatal)
        XCTAssertEqual(h.engine.stats.healthReason, "ok")
    }

    func testAHandoverOnRequestWaitsQuietlyUntilTheDisplayIsTakenBack() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.engine.yieldOutput()
        let presents = h.backend.presentCalls
        h.show(green)
        let iterations = h.run(for: .seconds(2))
        XCTAssertEqual(h.backend.presentCalls, presents, "nothing is presented while the display is handed over")
        XCTAssertEqual(h.backend.reacquireCalls, 0, "no attempt to take it back before asked")
        XCTAssertEqual(h.engine.stats.healthReason, "waiting for DRM master")
        XCTAssertEqual(h.engine.stats.masterLost, 0)
        XCTAssertLessThan(iterations, iterationBound)

        h.backend.reacquireRefusals = 1
        h.engine.takeOutputBack()
        h.run(for: .milliseconds(100))
        XCTAssertEqual(h.backend.reacquireCalls, 2, "refused once, then taken after the first backoff")
        XCTAssertEqual(h.frontPixel, xrgb(green))
        XCTAssertEqual(h.compositor.copyCalls.last?.rects, [Rect(size: EngineHarness.mode.size)])
        XCTAssertEqual(h.engine.stats.healthReason, "ok")
        XCTAssertEqual(h.faults, [])
    }

    func testENODEVStopsTheFramePathWithAFatalErrorAndNoBusyLoop() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.presentFaults = [h.backend.presentCalls + 1: ENODEV]
        h.show(green)
        h.settleNow()
        let fatal = try XCTUnwrap(h.fatal, "ENODEV is fatal: kioskd exits for its service manager")
        XCTAssertEqual(fatal.code, .deviceGone)
        XCTAssertTrue(fatal.message.contains("ENODEV"), fatal.message)
        XCTAssertEqual(h.faults.map(\.code), [.deviceGone])
        XCTAssertEqual(h.engine.stats.presentFailures, ["ENODEV": 1])
        XCTAssertFalse(h.engine.stats.healthy)

        let presents = h.backend.presentCalls
        h.show(blue)
        let iterations = h.run(for: .milliseconds(100))
        XCTAssertEqual(h.backend.presentCalls, presents, "nothing more is presented")
        XCTAssertEqual(h.frontPixel, xrgb(red))
        XCTAssertLessThan(iterations, iterationBound)
    }

    func testEINVALFallsBackAndTheFrameGoesOut() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.presentFaults = [h.backend.presentCalls + 1: EINVAL]
        h.show(green)
        h.run(for: .milliseconds(50))
        XCTAssertEqual(h.backend.fallBackCalls, 1)
        XCTAssertEqual(h.engine.stats.presentFailures, ["EINVAL": 1])
        XCTAssertEqual(h.faults.map(\.code), [.presentFailed])
        XCTAssertEqual(h.frontPixel, xrgb(green))
        XCTAssertNil(h.fatal)
    }

    func testEINVALWithNothingLeftToFallBackToIsFatal() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.refusedConfigurations = [OutputConfiguration(.legacy, h.backend.info.mode)]
        h.backend.presentFaults = [h.backend.presentCalls + 1: ENOSPC]
        h.show(green)
        h.run(for: .milliseconds(50))
        XCTAssertEqual(h.fatal?.code, .presentFailed)
        XCTAssertEqual(h.frontPixel, xrgb(red))
    }

    /// The connector offers the requested 75 Hz mode and a preferred 60 Hz one of the same size.
    private let requested75 = OutputMode(width: 64, height: 48, refreshMilliHz: 75_000)
    private let preferred60 = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000, isPreferred: true)

    func testEINVALFallsBackFromAtomicToLegacyThenToThePreferredMode() throws {
        let h = try Harness(mode: requested75, modes: [requested75, preferred60])
        h.run(for: .milliseconds(50))
        h.backend.presentFaults = [h.backend.presentCalls + 1: EINVAL]
        h.show(green)
        h.run(for: .milliseconds(50))
        XCTAssertEqual(h.backend.info.commitAPI, .legacy, "first the commit API falls back")
        XCTAssertEqual(h.backend.info.mode, requested75, "and the requested mode is kept")
        XCTAssertEqual(h.frontPixel, xrgb(green))

        h.backend.presentFaults = [h.backend.presentCalls + 1: ENOSPC]
        h.show(blue)
        let iterations = h.run(for: .milliseconds(100))
        XCTAssertEqual(h.backend.fallbackAttempts, [OutputConfiguration(.legacy, requested75), OutputConfiguration(.atomic, preferred60)])
        XCTAssertEqual(h.backend.info.mode, preferred60, "then the mode falls back to the preferred one")
        XCTAssertEqual(h.backend.info.commitAPI, .atomic, "with atomic commits again, probed first")
        XCTAssertEqual(h.engine.stats.presentFailures, ["EINVAL": 1, "ENOSPC": 1])
        XCTAssertEqual(h.faults.map(\.code), [.presentFailed, .presentFailed])
        XCTAssertEqual(h.frontPixel, xrgb(blue), "the frame went out in the preferred mode")
        XCTAssertNil(h.fatal)
        XCTAssertLessThan(iterations, iterationBound)
    }

    func testARefusedFallbackIsSkippedForTheNextOne() throws {
        let h = try Harness(mode: requested75, modes: [requested75, preferred60])
        h.run(for: .milliseconds(50))
        h.backend.refusedConfigurations = [OutputConfiguration(.legacy, requested75), OutputConfiguration(.atomic, preferred60)]
        h.backend.presentFaults = [h.backend.presentCalls + 1: EINVAL]
        h.show(green)
        h.run(for: .milliseconds(50))
        XCTAssertEqual(h.backend.info.commitAPI, .legacy)
        XCTAssertEqual(h.backend.info.mode, preferred60)
        XCTAssertEqual(h.frontPixel, xrgb(green))
        XCTAssertNil(h.fatal)
    }

    func testAPreferredModeOfAnotherSizeIsNoFallbackSoTheFaultIsFatalOnceLegacyIsRefused() throws {
        let large = OutputMode(width: 128, height: 96, refreshMilliHz: 60_000, isPreferred: true)
        let h = try Harness(mode: requested75, modes: [large, requested75])
        h.run(for: .milliseconds(50))
        h.backend.presentFaults = [h.backend.presentCalls + 1: EINVAL, h.backend.presentCalls + 2: EINVAL]
        h.show(green)
        let iterations = h.run(for: .milliseconds(100))
        XCTAssertEqual(h.backend.fallbackAttempts, [OutputConfiguration(.legacy, requested75)])
        XCTAssertEqual(h.fatal?.code, .presentFailed)
        XCTAssertTrue(h.fatal?.message.contains("nothing left to fall back to") ?? false, h.fatal?.message ?? "no fatal error")
        XCTAssertEqual(h.backend.info.mode.size, EngineHarness.mode.size, "the size never changes under the compositor")
        XCTAssertLessThan(iterations, iterationBound)
    }

    /// A driver without vblank completes a flip when its transfer does (an SPI panel takes tens of milliseconds):
    /// on a timer-paced output a flip gets 1 s before it counts as a timeout, and is still caught after that.
    func testATimerPacedOutputGivesAFlipOneSecond() throws {
        let h = try Harness()
        h.backend.flipPacing = .timer(reason: "no vblank")
        XCTAssertEqual(h.engine.flipTimeout, .seconds(1))
        h.run(for: .milliseconds(50))
        h.backend.flipsNeverComplete = true
        h.show(green)
        h.settleNow()
        h.run(for: .milliseconds(990))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 0, "a slow transfer is not a fault")
        h.backend.flipsNeverComplete = false
        h.run(for: .milliseconds(60))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 1)
        XCTAssertEqual(h.backend.reacquireCalls, 1)
    }

    func testAFlipThatNeverCompletesTimesOutAndTheOutputIsModesetAgain() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.flipsNeverComplete = true
        h.show(green)
        h.settleNow()
        XCTAssertTrue(h.backend.isFlipPending)
        XCTAssertEqual(h.engine.flipTimeout, .milliseconds(250), "3 refresh periods at 60 Hz, raised to 250 ms")
        h.run(for: .milliseconds(249))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 0)
        h.backend.flipsNeverComplete = false
        let iterations = h.run(for: .milliseconds(51))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 1)
        XCTAssertEqual(h.faults.map(\.code), [.flipTimeout])
        XCTAssertEqual(h.backend.reacquireCalls, 1, "the output was modeset again")
        XCTAssertEqual(h.frontPixel, xrgb(green), "the frame went out after the modeset")
        XCTAssertLessThan(iterations, iterationBound)
        XCTAssertNil(h.fatal)
        XCTAssertTrue(h.engine.stats.healthy)
    }

    /// A loop that wakes late runs the deadline's timer before it reads the device: the flip's event, waiting
    /// there, is read first and no timeout is counted.
    func testAFlipEventWaitingUnreadWhenTheDeadlineFiresIsNoTimeout() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.flipEventsWaitUnread = true
        h.show(green)
        h.settleNow()
        XCTAssertTrue(h.backend.isFlipPending)
        h.run(for: .milliseconds(300))
        XCTAssertGreaterThan(h.backend.readPendingEventsCalls, 0, "the deadline read the device")
        XCTAssertEqual(h.engine.stats.flipTimeouts, 0)
        XCTAssertEqual(h.backend.reacquireCalls, 0, "no modeset")
        XCTAssertEqual(h.frontPixel, xrgb(green))
        XCTAssertTrue(h.engine.stats.healthy)
    }

    /// A starved machine runs its vblanks late with everything else: while the driver's counter has not moved 3
    /// vblanks past the present, the flip is not stuck and gets more time (no modeset, which would blank a real
    /// monitor for a second). Once 3 vblanks are counted with the flip still pending, it is.
    func testAFlipIsStuckOnlyAfterThreeVblanksTheDriverCounted() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.vblankCounter = 1000
        h.backend.flipsNeverComplete = true
        h.show(green)
        h.settleNow()
        h.backend.vblankCounter = 1002
        h.run(for: .milliseconds(600))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 0, "2 vblanks in 600 ms: the machine is slow, the flip not stuck")
        XCTAssertEqual(h.engine.stats.flipDeadlinesExtended, 2)
        XCTAssertEqual(h.backend.reacquireCalls, 0)
        h.backend.vblankCounter = 1003
        h.run(for: .milliseconds(200))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 1, "3 vblanks counted and the flip still pending")
        XCTAssertEqual(h.backend.reacquireCalls, 1)
    }

    /// A vblank counter that stands still does not hold the deadline off for ever: a vblank interrupt that died
    /// leaves the flip stuck, and 1 s after the present it counts as such.
    func testAFlipWhoseVblanksStoppedTimesOutAfterOneSecond() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.vblankCounter = 7
        h.backend.flipsNeverComplete = true
        h.show(green)
        h.settleNow()
        h.run(for: .milliseconds(950))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 0)
        h.run(for: .milliseconds(160))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 1)
        XCTAssertEqual(h.faults.map(\.code), [.flipTimeout])
        XCTAssertEqual(h.backend.reacquireCalls, 1)
    }

    /// A loop that was not run on time (the deadline's timer fired well after it was due) says the machine is
    /// starved, and the driver's commit worker likely with it: the flip gets another period. A deadline that then
    /// fires on time with the flip still pending counts.
    func testADeadlineThatFiresLateGivesTheFlipAnotherPeriod() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.flipsNeverComplete = true
        h.show(green)
        h.settleNow()
        h.poller.advance(by: .milliseconds(400))
        h.loop.runOnce(timeout: .zero)
        XCTAssertEqual(h.engine.stats.flipTimeouts, 0, "the deadline fired 150 ms late")
        XCTAssertEqual(h.engine.stats.flipDeadlinesExtended, 1)
        h.run(for: .milliseconds(260))
        XCTAssertEqual(h.engine.stats.flipTimeouts, 1, "on time, with the flip still pending")
        XCTAssertTrue(h.faults.first?.message.contains("within 650 ms") ?? false, h.faults.first?.message ?? "no fault")
        XCTAssertEqual(h.backend.reacquireCalls, 1)
    }

    func testFlipsThatKeepTimingOutAreFatal() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.flipsNeverComplete = true
        h.show(green)
        let iterations = h.run(for: .seconds(1))
        XCTAssertEqual(h.engine.stats.flipTimeouts, LayerEngine.flipTimeoutLimit)
        XCTAssertEqual(h.fatal?.code, .flipTimeout)
        XCTAssertFalse(h.engine.stats.healthy)
        XCTAssertEqual(h.frontPixel, xrgb(red))
        XCTAssertLessThan(iterations, iterationBound)
    }

    func testADeviceThatGoesAwayIsFatal() throws {
        let h = try Harness()
        h.run(for: .milliseconds(50))
        h.backend.loseDevice()
        XCTAssertEqual(h.fatal?.code, .deviceGone)
        XCTAssertEqual(h.faults.map(\.code), [.deviceGone])
        XCTAssertEqual(h.engine.stats.presentFailures, ["EPOLLHUP": 1])
        let presents = h.backend.presentCalls
        h.show(green)
        XCTAssertLessThan(h.run(for: .milliseconds(100)), iterationBound)
        XCTAssertEqual(h.backend.presentCalls, presents)
    }

    func testHealthAnswersFromTheLoopAndTheFlipDeadline() {
        let t0 = MonotonicInstant(nanoseconds: 10_000_000_000)
        let timeout = Duration.milliseconds(100)
        func health(now: Duration, wake: Duration?, flip: Duration?, master: Bool = false, fatal: String? = nil) -> FrameHealth {
            FrameHealth.evaluate(now: t0 + now, lastLoopWake: wake.map { t0 + $0 }, flipPendingSince: flip.map { t0 + $0 },
                                 flipTimeout: timeout, waitingForMaster: master, fatal: fatal)
        }
        XCTAssertEqual(health(now: .seconds(60), wake: .seconds(60), flip: nil), FrameHealth(isHealthy: true, reason: "ok"),
                       "an idle kiosk that flips nothing is healthy")
        XCTAssertFalse(health(now: .milliseconds(1500), wake: .zero, flip: nil).isHealthy)
        XCTAssertTrue(health(now: .milliseconds(1500), wake: .milliseconds(600), flip: .milliseconds(1450)).isHealthy)
        let overdue = health(now: .milliseconds(1500), wake: .milliseconds(1500), flip: .milliseconds(1300))
        XCTAssertFalse(overdue.isHealthy)
        XCTAssertEqual(overdue.reason, "a flip is overdue by 100 ms")
        XCTAssertTrue(health(now: .zero, wake: .zero, flip: nil, master: true).isHealthy)
        XCTAssertFalse(health(now: .zero, wake: .zero, flip: nil, fatal: "gone").isHealthy)
    }
}
