import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// A widget updated faster than it renders, beside a clock, under one transaction group (as a scene's root is),
/// on the manual clock: renders of the storm widget take `renderTime` of manual time, the clock's take none.
final class UpdateStormTests: XCTestCase {
    private let renderTime = Duration.milliseconds(150)
    private let runTime = Duration.seconds(6)

    func testAWidgetUpdatedFasterThanItRendersAdvancesAndTheClockBesideItKeepsTicking() throws {
        let h = try EngineHarness()
        let frame = h.frameDuration
        let scene = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "scene")
        scene.holdsChildrenUntilReady = true
        let storm = Layer(frame: Rect(x: 0, y: 0, width: 32, height: 24), content: SolidContent(color: Self.color(storm: 0)), name: "storm")
        let clock = Layer(frame: Rect(x: 32, y: 0, width: 32, height: 24), content: SolidContent(color: Self.color(clock: 0)), name: "clock")
        scene.addChild(storm)
        scene.addChild(clock)
        h.root.addChild(scene)

        let start = h.loop.now
        // When each storm value was set: value n is the newest data from setAt[n] until setAt[n + 1].
        var setAt: [MonotonicInstant] = [start]
        let updates = h.loop.addTimer(after: renderTime / 4, repeating: renderTime / 4) {
            setAt.append(h.loop.now)
            storm.content = SolidContent(color: Self.color(storm: setAt.count - 1))
        }
        var seconds = 0
        let ticks = h.loop.addTimer(after: .seconds(1), repeating: .seconds(1)) {
            seconds += 1
            clock.content = SolidContent(color: Self.color(clock: seconds))
        }

        // What each flip put on screen.
        var shown: [(time: MonotonicInstant, storm: Int?, clock: Int?)] = []
        h.listeners.append(h.engine.addFlipListener { event in
            shown.append((event.timestamp, h.frontPixel(x: 1, y: 1).flatMap { Self.storm(from: $0) },
                          h.frontPixel(x: 33, y: 1).flatMap { Self.clock(from: $0) }))
        })

        // A storm render runs `renderTime` after it was queued; a timer makes the manual clock stop there.
        var stormDue: MonotonicInstant?
        var keepAlive: [TimerHandle] = []
        h.runsQueuedJobs = false
        runManualTime(h.loop, h.poller, for: runTime, settlingAtEnd: false) {
            for _ in 0..<1000 {
                let wakeups = h.loop.wakeups
                h.turn()
                var ran = h.pool.runQueued(where: { $0.label != "storm" })
                if h.pool.queuedJobs.contains(where: { $0.label == "storm" }) {
                    if stormDue == nil {
                        stormDue = h.loop.now + renderTime
                        keepAlive.append(h.loop.addTimer(at: stormDue!) {})
                    }
                    if let due = stormDue, h.loop.now >= due {
                        ran += h.pool.runQueued(where: { $0.label == "storm" })
                        stormDue = nil
                    }
                }
                if ran == 0, h.loop.wakeups == wakeups, h.engine.transaction.isEmpty { return }
            }
            XCTFail("the loop never went quiet")
        }
        updates.cancel()
        ticks.cancel()

        XCTAssertGreaterThan(h.stats.framesComposed, Int(runTime / renderTime) / 2, "frames were composed during the storm")
        XCTAssertLessThanOrEqual(h.stats.rendersStarted, Int(runTime / renderTime) + 10, "one storm render at a time")

        // The storm widget's shown value advances at least once per 2R, and never lags its newest data by more
        // than 2R + one frame.
        let stormChanges = zip(shown, shown.dropFirst()).filter { $0.0.storm != $0.1.storm }.map(\.1)
        let firstShown = try XCTUnwrap(stormChanges.first, "the storm widget never showed a value")
        XCTAssertLessThanOrEqual(firstShown.time - start, renderTime * 2 + frame)
        var previous = firstShown
        for change in stormChanges.dropFirst() {
            XCTAssertLessThanOrEqual(change.time - previous.time, renderTime * 2,
                                     "storm value \(previous.storm ?? -1) stayed from \(previous.time) to \(change.time)")
            previous = change
        }
        XCTAssertLessThanOrEqual(start + runTime - previous.time, renderTime * 2, "the storm widget kept advancing to the end")
        for (before, flip) in zip(shown, shown.dropFirst()) {
            guard let value = before.storm, value + 1 < setAt.count, setAt[value + 1] < flip.time else { continue }
            XCTAssertLessThanOrEqual(flip.time - setAt[value + 1], renderTime * 2 + frame,
                                     "value \(value) was still on screen at \(flip.time), superseded at \(setAt[value + 1])")
        }
        XCTAssertGreaterThan(previous.storm ?? 0, setAt.count - 1 - 2 * 4 - 1, "the last value shown is recent")

        // The clock ticks every second, within a frame or two of the tick.
        for second in 1..<Int(runTime / .seconds(1)) {
            let tick = start + .seconds(second)
            let first = shown.first { $0.clock == second }
            XCTAssertNotNil(first, "clock second \(second) was never shown")
            if let first {
                XCTAssertGreaterThanOrEqual(first.time, tick)
                XCTAssertLessThanOrEqual(first.time - tick, frame * 2, "clock second \(second) shown late")
            }
        }
        withExtendedLifetime(keepAlive) {}
    }

    // Storm values: blue and red channels, marked by green 0x80. Clock seconds: green, marked by red 0x80.
    private static func color(storm value: Int) -> Color { Color(rgb: 0x00_8000 | UInt32(value & 0xFF) | UInt32(value >> 8 & 0x7F) << 16) }
    private static func color(clock seconds: Int) -> Color { Color(rgb: 0x80_0000 | UInt32(seconds & 0x7F) << 8) }
    private static func storm(from pixel: UInt32) -> Int? { pixel & 0x00_8000 != 0 ? Int(pixel & 0xFF) | Int(pixel >> 16 & 0x7F) << 8 : nil }
    private static func clock(from pixel: UInt32) -> Int? { pixel & 0x80_0000 != 0 ? Int(pixel >> 8 & 0x7F) : nil }
}
