import Foundation
import KioskCore
import KioskRuntime
import KioskTestSupport
import XCTest

/// Scenes tell the engine what they expect to change (`LayerEngine.expectChange(in:)`): a seconds clock each
/// second, a ticker each whole-pixel step. On the real compositor and the manual clock: a moving scene stays
/// healthy, a clock whose renders stop finishing is frozen after `frozen_after` missed seconds, and a ticker that
/// keeps moving beside that clock keeps the screen from counting as frozen.
final class ScreenWatchSceneTests: XCTestCase {
    private func harness(ticker: Bool) throws -> StageHarness {
        let h = try StageHarness(yaml: """
            size: 320x120
            background: "#102030"
            font: {family: Sans, size: 16}
            widgets:
              - {id: time, type: clock, format: "%H:%M:%S", timezone: UTC, x: 10, y: 10, width: 150, height: 30}
            \(ticker ? "  - {id: news, type: ticker, text: \"Platform 4: the 10:42 is delayed\", speed: 60, x: 0, y: 60, width: 320, height: 30, background: \"#000000\", foreground: white}" : "")
            """, size: Size(width: 320, height: 120))
        h.wallClock.run()
        h.settle()
        return h
    }

    func testAClockThatStopsRenderingIsFrozenAfterFrozenAfterSeconds() throws {
        let h = try harness(ticker: false)
        var faults: [FrameFault] = []
        h.listeners.append(h.engine.addFaultListener { faults.append($0) })
        h.run(for: .seconds(10))
        XCTAssertEqual(h.engine.health.reason, "ok")
        XCTAssertLessThanOrEqual(h.stats.expectedChangesMissed, 1)
        XCTAssertNotNil(h.engine.screenFingerprint)

        h.runsQueuedJobs = false
        h.run(for: .seconds(Int64(h.engine.screenHealth.frozenAfter) + 2))
        XCTAssertTrue(h.engine.health.reason.hasPrefix("frozen: "), h.engine.health.reason)
        XCTAssertEqual(faults.map(\.code), [.screenFrozen])
        h.runsQueuedJobs = true
        h.run(for: .seconds(2))
        XCTAssertEqual(h.engine.health.reason, "ok")
    }

    func testATickerKeepsTheScreenMovingAndStaysHealthy() throws {
        let h = try harness(ticker: true)
        let tiles = h.stats.tilesHashed
        // Between the tick that moved the strip and the flip that shows it, the step is an expected change not yet
        // seen: sampled every 5 ms, most samples find one (a clock alone would be found in a few).
        var samples = 0, expecting = 0
        let sampler = h.loop.addTimer(after: .milliseconds(5), repeating: .milliseconds(5)) { [unowned h] in
            samples += 1
            if h.stats.expectedChangesMissed >= 1 { expecting += 1 }
        }
        h.run(for: .seconds(10))
        sampler.cancel()
        XCTAssertEqual(h.engine.health.reason, "ok")
        XCTAssertGreaterThan(h.stats.framesFlipped, 500, "the ticker moves every frame")
        XCTAssertGreaterThan(expecting, samples / 4, "each step of the ticker is an expected change (\(expecting) of \(samples))")
        XCTAssertLessThanOrEqual(h.stats.expectedChangesMissed, 2)
        XCTAssertGreaterThan(h.stats.tilesHashed, tiles)
        // The clock's renders stop; the ticker still moves the screen: not frozen.
        h.runsQueuedJobs = false
        h.run(for: .seconds(10))
        XCTAssertEqual(h.engine.health.reason, "ok")
    }
}
