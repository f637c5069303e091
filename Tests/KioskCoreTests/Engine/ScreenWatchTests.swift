import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// Black and frozen screens on the manual clock (headless output, recording compositor, `.manual` render pool):
/// a clock whose renders stop finishing turns the health reason `frozen` after `frozenAfter` missed ticks; black
/// widgets on black turn it `black` after `blackAfter`; ordinary scenes, moving and static, never trip either over
/// 10,000 frames. `health.restart_on` decides whether a problem is unhealthy; each starts one `error` event.
final class ScreenWatchTests: XCTestCase {
    private let black = Color(rgb: 0x000000)

    /// A harness with a fault listener, and a "clock": a layer whose content changes every second of loop time,
    /// each change told to the engine as expected (as `SceneMotion` does for a clock's seconds).
    private final class Rig {
        let harness: EngineHarness
        var faults: [FrameFault] = []
        var clockTimer: TimerHandle?
        var ticks = 0

        init(restartOn: Set<ScreenHealthSettings.Problem> = []) throws {
            harness = try EngineHarness()
            harness.engine.screenHealth = ScreenHealthSettings(restartOn: restartOn)
            harness.listeners.append(harness.engine.addFaultListener { [unowned self] in faults.append($0) })
        }

        var engine: LayerEngine { harness.engine }
        var screenFaults: [FrameFault] { faults.filter { $0.code == .screenBlack || $0.code == .screenFrozen } }

        /// Starts the clock in `layer`: a new colour each second, each an expected change.
        func startClock(in layer: Layer) {
            clockTimer = harness.loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { [unowned self] in
                ticks += 1
                let shade = Double(ticks % 200 + 20) / 255
                layer.content = SolidContent(color: Color(red: shade, green: 1 - shade, blue: 0.5))
                engine.expectChange(in: layer)
            }
        }
    }

    /// A screen problem is the health reason only when nothing graver is: a fatal error, a hung loop, an overdue
    /// flip and waiting for DRM master come first; it is unhealthy only when `restart_on` names it.
    func testAScreenProblemComesAfterTheFramePathsOwnReasons() {
        let t0 = MonotonicInstant(nanoseconds: 10_000_000_000)
        func health(wake: Duration = .zero, flip: Duration? = nil, master: Bool = false, fatal: String? = nil,
                    restarts: Bool) -> FrameHealth {
            let now = t0 + .seconds(10)
            return FrameHealth.evaluate(now: now, lastLoopWake: t0 + (.seconds(10) - wake), flipPendingSince: flip.map { t0 + (.seconds(10) - $0) },
                                        flipTimeout: .milliseconds(100), waitingForMaster: master, fatal: fatal,
                                        screen: (reason: "frozen: test", restarts: restarts))
        }
        XCTAssertEqual(health(restarts: false), FrameHealth(isHealthy: true, reason: "frozen: test"))
        XCTAssertEqual(health(restarts: true), FrameHealth(isHealthy: false, reason: "frozen: test"))
        XCTAssertEqual(health(fatal: "gone", restarts: false), FrameHealth(isHealthy: false, reason: "gone"))
        XCTAssertEqual(health(wake: .seconds(2), restarts: false).reason, "the main loop has not turned for 2000 ms")
        XCTAssertEqual(health(flip: .milliseconds(300), restarts: false).reason, "a flip is overdue by 200 ms")
        XCTAssertEqual(health(master: true, restarts: true), FrameHealth(isHealthy: true, reason: "waiting for DRM master"))
    }

    func testAClockWhoseRendersStopFinishingTurnsFrozenAfterNMissedTicks() throws {
        let rig = try Rig()
        let h = rig.harness
        let clock = h.addSolidLayer("clock", frame: Rect(x: 4, y: 4, width: 30, height: 12), color: red)
        h.addSolidLayer("title", frame: Rect(x: 4, y: 20, width: 50, height: 12), color: blue)
        rig.startClock(in: clock)
        h.run(for: .seconds(10))
        XCTAssertEqual(h.engine.health, FrameHealth(isHealthy: true, reason: "ok"), "a ticking clock is not frozen")

        // The fault: the clock's renders never finish from here on (queued, never run).
        h.runsQueuedJobs = false
        h.run(for: .milliseconds(500))
        let fingerprint = try XCTUnwrap(h.engine.screenFingerprint)
        let frozenAfter = h.engine.screenHealth.frozenAfter
        h.run(for: .seconds(Int64(frozenAfter)))
        XCTAssertEqual(h.engine.health.reason, "ok", "\(frozenAfter) missed ticks are allowed")
        XCTAssertEqual(h.stats.expectedChangesMissed, frozenAfter)
        h.run(for: .seconds(1))
        XCTAssertEqual(h.engine.screenFingerprint, fingerprint, "nothing new reached the screen")
        let health = h.engine.health
        XCTAssertTrue(health.isHealthy, "frozen alone does not restart kioskd: \(health)")
        XCTAssertTrue(health.reason.hasPrefix("frozen: "), health.reason)
        XCTAssertEqual(h.stats.healthReason, health.reason)
        XCTAssertEqual(rig.screenFaults.map(\.code), [.screenFrozen])
        XCTAssertEqual(rig.screenFaults.first?.message, health.reason)

        // More ticks do not repeat the event; renders finishing again clear it.
        h.run(for: .seconds(3))
        XCTAssertEqual(rig.screenFaults.count, 1)
        h.runsQueuedJobs = true
        h.run(for: .seconds(2))
        XCTAssertEqual(h.engine.health, FrameHealth(isHealthy: true, reason: "ok"))
        XCTAssertNotEqual(h.engine.screenFingerprint, fingerprint)
        XCTAssertEqual(rig.screenFaults.count, 1)
    }

    func testRestartOnFrozenMakesTheSignalUnhealthy() throws {
        let rig = try Rig(restartOn: [.frozen])
        let h = rig.harness
        let clock = h.addSolidLayer("clock", frame: Rect(x: 4, y: 4, width: 30, height: 12), color: red)
        rig.startClock(in: clock)
        h.run(for: .seconds(3))
        XCTAssertTrue(h.engine.health.isHealthy)
        h.runsQueuedJobs = false
        h.run(for: .seconds(8))
        XCTAssertFalse(h.engine.health.isHealthy)
        XCTAssertTrue(h.engine.health.reason.hasPrefix("frozen: "), h.engine.health.reason)
        XCTAssertFalse(h.stats.healthy)
    }

    func testExpectedChangesInLayersNotShownDoNotCount() throws {
        let rig = try Rig()
        let h = rig.harness
        let page = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "page")
        page.clipsToBounds = true
        h.root.addChild(page)
        let hidden = h.addSolidLayer("hidden", frame: Rect(x: 0, y: 0, width: 10, height: 10), color: red, to: page)
        let clipped = h.addSolidLayer("clipped", frame: Rect(x: 70, y: 0, width: 10, height: 10), color: red, to: page)
        let offscreen = h.addSolidLayer("offscreen", frame: Rect(x: 0, y: 60, width: 10, height: 10), color: red)
        h.settle()
        hidden.isHidden = true
        for _ in 0..<20 {
            for layer in [hidden, clipped, offscreen] { h.engine.expectChange(in: layer) }
        }
        XCTAssertEqual(h.stats.expectedChangesMissed, 0)
        XCTAssertEqual(h.engine.health.reason, "ok")
        page.isHidden = true
        h.settle()
        let shown = h.addSolidLayer("shown", frame: Rect(x: 0, y: 0, width: 10, height: 10), color: red)
        h.settle()
        for _ in 0..<3 { h.engine.expectChange(in: shown) }
        XCTAssertEqual(h.stats.expectedChangesMissed, 3, "a shown layer's changes count")
    }

    func testBlackWidgetsOnBlackTurnTheScreenBlack() throws {
        let rig = try Rig()
        let h = rig.harness
        h.addSolidLayer("label", frame: Rect(x: 4, y: 4, width: 30, height: 12), color: black)
        h.addSolidLayer("image", frame: Rect(x: 10, y: 20, width: 40, height: 20), color: black)
        h.settle()
        XCTAssertEqual(h.engine.screenFingerprint?.uniformColor, 0)
        XCTAssertEqual(h.engine.health.reason, "ok", "not before black_after")
        h.run(for: h.engine.screenHealth.blackAfter)
        let health = h.engine.health
        XCTAssertTrue(health.isHealthy, "\(health)")
        XCTAssertTrue(health.reason.hasPrefix("black: "), health.reason)
        XCTAssertEqual(rig.screenFaults.map(\.code), [.screenBlack], "the event comes when black_after passes, without a frame")

        // A widget showing again clears it.
        h.root.children[0].content = SolidContent(color: yellow)
        h.settle()
        XCTAssertEqual(h.engine.health, FrameHealth(isHealthy: true, reason: "ok"))
    }

    func testRestartOnBlackMakesTheSignalUnhealthyAndOneColourCountsAsBlack() throws {
        let rig = try Rig(restartOn: [.black])
        let h = rig.harness
        h.root.backgroundColor = grey
        h.addSolidLayer("label", frame: Rect(x: 4, y: 4, width: 30, height: 12), color: grey)
        h.settle()
        h.run(for: .seconds(3))
        XCTAssertFalse(h.engine.health.isHealthy)
        XCTAssertTrue(h.engine.health.reason.contains("one colour (#808080)"), h.engine.health.reason)
    }

    func testASolidBackgroundAloneIsNotBlack() throws {
        let rig = try Rig(restartOn: [.black, .frozen])
        let h = rig.harness
        // Colour layers without content: the scene's background, black on purpose.
        let backdrop = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "backdrop")
        backdrop.backgroundColor = black
        h.root.addChild(backdrop)
        h.settle()
        // A timer turns the loop each second, as the watchdog's does.
        let turns = h.loop.addTimer(after: .seconds(1), repeating: .seconds(1)) {}
        defer { turns.cancel() }
        h.run(for: .seconds(60))
        XCTAssertEqual(h.engine.screenFingerprint?.uniformColor, 0)
        XCTAssertEqual(h.engine.health, FrameHealth(isHealthy: true, reason: "ok"))
        XCTAssertTrue(rig.screenFaults.isEmpty)
    }

    func testAnOutputTurnedOffIsNeitherBlackNorFrozen() throws {
        let rig = try Rig(restartOn: [.black, .frozen])
        let h = rig.harness
        let clock = h.addSolidLayer("clock", frame: Rect(x: 4, y: 4, width: 30, height: 12), color: black)
        rig.startClock(in: clock)
        h.run(for: .milliseconds(500))
        try h.engine.setOutputPower(false)
        h.run(for: .seconds(30))
        XCTAssertNil(h.engine.screenFingerprint)
        XCTAssertEqual(h.engine.health, FrameHealth(isHealthy: true, reason: "ok"))
        XCTAssertTrue(rig.screenFaults.isEmpty)
    }

    /// 10,000 frames of a moving scene (a clock each second, a strip moving a pixel a frame with each move an
    /// expected change, a black background with widgets), then an hour of the same scene standing still: neither
    /// problem trips, ever.
    func testOrdinaryScenesNeverTripOverTenThousandFrames() throws {
        let rig = try Rig(restartOn: [.black, .frozen])
        let h = rig.harness
        h.root.backgroundColor = black
        let clock = h.addSolidLayer("clock", frame: Rect(x: 4, y: 4, width: 30, height: 12), color: red)
        h.addSolidLayer("title", frame: Rect(x: 40, y: 4, width: 20, height: 12), color: blue)
        let band = Layer(frame: Rect(x: 0, y: 30, width: 64, height: 10), name: "band")
        band.clipsToBounds = true
        h.root.addChild(band)
        let strip = h.addSolidLayer("strip", frame: Rect(x: 64, y: 0, width: 20, height: 10), color: yellow, to: band)
        rig.startClock(in: clock)
        var moves = 0
        let token = h.engine.addAnimation(target: strip) { [unowned h] strip, _ in
            moves += 1
            strip.frame.x = 63 - moves % 84 + 20 - 20   // 63 down to -20, then again
            h.engine.expectChange(in: strip)
            return true
        }
        var reasons: Set<String> = []
        let sampler = h.loop.addTimer(after: .milliseconds(250), repeating: .milliseconds(250)) { [unowned h] in
            reasons.insert(h.engine.health.reason)
        }
        let started = h.stats.framesFlipped
        let deadline = ContinuousClock.now + .seconds(60)
        while h.stats.framesFlipped - started < 10_000, ContinuousClock.now < deadline {
            h.run(for: .seconds(10))
        }
        XCTAssertGreaterThanOrEqual(h.stats.framesFlipped - started, 10_000)
        // Standing still: the strip stops, the clock stops ticking (a clock without seconds), for an hour.
        h.engine.removeAnimation(token)
        rig.clockTimer?.cancel()
        h.run(for: .seconds(3600))
        sampler.cancel()
        XCTAssertEqual(reasons, ["ok"])
        XCTAssertTrue(rig.screenFaults.isEmpty, "\(rig.screenFaults)")
        XCTAssertEqual(h.engine.health, FrameHealth(isHealthy: true, reason: "ok"))
        XCTAssertGreaterThan(h.stats.tilesHashed, 0)
    }

    func testStatsAndFingerprintFollowTheFrameOnScreen() throws {
        let rig = try Rig()
        let h = rig.harness
        XCTAssertNil(h.stats.fingerprint, "nothing flipped yet")
        let layer = h.addSolidLayer("a", frame: Rect(x: 0, y: 0, width: 10, height: 10), color: red)
        h.settle()
        let first = try XCTUnwrap(h.engine.screenFingerprint)
        XCTAssertEqual(h.stats.fingerprint, first.hex)
        XCTAssertEqual(first, h.compositor.fingerprint)
        let hashed = h.stats.tilesHashed
        // Presents of the unchanged frame (a display link running) hash nothing.
        h.engine.setNeedsPresent()
        h.settle()
        XCTAssertEqual(h.stats.tilesHashed, hashed)
        XCTAssertEqual(h.engine.screenFingerprint, first)
        layer.content = SolidContent(color: green)
        h.settle()
        XCTAssertNotEqual(h.engine.screenFingerprint, first)
        XCTAssertEqual(h.stats.tilesHashed, hashed + 1, "the 10x10 layer lies in one tile")
        layer.content = SolidContent(color: red)
        h.settle()
        XCTAssertEqual(h.engine.screenFingerprint, first, "the same image, the same fingerprint")
    }
}
