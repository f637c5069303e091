import KioskBench
import KioskCore
import XCTest

/// The update-storm scenario measures what it says: lags observed on the engine, and a target computed from them.
final class UpdateStormScenarioTests: XCTestCase {
    func testAStormRunMeasuresEveryWidgetsLagAndComputesTheTargetFromMeasuredFigures() throws {
        // A shorter storm text than the bench's keeps the test quick; it still takes longer to render than the
        // 20 ms between its updates on a loaded machine, and the measurement does not depend on it.
        let mode = OutputMode(width: 1280, height: 720, refreshMilliHz: 60_000)
        let f = try UpdateStorm.run(mode: mode, seconds: 1.5, stormParagraphs: 200)
        // The run ends at the first flip after its 1.5 s: a few frames more at most, and well inside the scenario's
        // 30 s watchdog even on a loaded machine.
        XCTAssertGreaterThanOrEqual(f.seconds, 1.5)
        XCTAssertLessThan(f.seconds, 1.5 + 5, "\(f)")
        // 50 Hz and 10 Hz timers on the real loop: at least some of each fired.
        XCTAssertGreaterThan(f.storm.updates, 10, "\(f)")
        XCTAssertGreaterThan(f.label.updates, 3, "\(f)")
        XCTAssertEqual(f.stormUpdatesPerSecond, Double(f.storm.updates) / f.seconds, accuracy: 1e-9)
        for (name, lag) in [("storm", f.storm), ("label", f.label)] {
            let p50 = try XCTUnwrap(lag.lagMsP50, name), p99 = try XCTUnwrap(lag.lagMsP99, name)
            let max = try XCTUnwrap(lag.lagMsMax, name)
            XCTAssertGreaterThan(p50, 0, name)
            XCTAssertLessThanOrEqual(p50, p99, name)
            XCTAssertLessThanOrEqual(p99, max, name)
            // Shown while the run went on: no update waited as long as the whole run lasted.
            XCTAssertLessThan(max, f.seconds * 1000, name)
        }
        // Nothing is shown before it is rendered: the worst lag is at least the fastest render's share of it.
        let render = try XCTUnwrap(f.stormRenderMs)
        XCTAssertGreaterThan(render, 0)
        XCTAssertGreaterThan(try XCTUnwrap(f.storm.lagMsMax), try XCTUnwrap(f.stormDispatchToAppliedMsP50) / 2)
        XCTAssertEqual(f.frameMs, 1000.0 / 60, accuracy: 1e-5)
        let target = try XCTUnwrap(f.targetLagMs)
        XCTAssertEqual(target, 2 * render + f.frameMs, accuracy: 1e-9)
        // The verdict is taken per update: its lag less the renders it waited for, against one frame.
        let beyondP50 = try XCTUnwrap(f.stormLagBeyondRendersMsP50, "\(f)"), beyondP99 = try XCTUnwrap(f.stormLagBeyondRendersMsP99, "\(f)")
        XCTAssertLessThanOrEqual(beyondP50, beyondP99)
        XCTAssertLessThan(beyondP99, try XCTUnwrap(f.storm.lagMsMax), "the renders are part of every lag")
        XCTAssertEqual(f.stormTargetMet, beyondP99 <= f.frameMs)
        // The label and the clock are judged too, against their own renders timed alone (the host's workers: more
        // than one here unless the host has one processor), and the run's verdict is all three.
        XCTAssertEqual(f.workers, RenderQueuePool.activeProcessorCount)
        try assertWidgetsJudged(f)
        // The repaint window on (`auto`), its lead and misses measured. The lead in use at the end is the
        // configured one or wider (the measured lateness), or zero while closed after a late present or a miss; a miss is a flip that
        // missed the vblank it aimed at, so there are no more of them than flips in the run.
        XCTAssertEqual(f.repaintWindow, "auto")
        let lead = try XCTUnwrap(f.repaintLeadMs, "\(f)")
        let configuredLead = RepaintWindow.lead(for: mode.frameDuration).milliseconds
        XCTAssertTrue(lead == 0 || lead >= configuredLead - 0.001, "lead \(lead) ms, configured \(configuredLead) ms")
        let flipped = try XCTUnwrap(f.framesFlippedPerSecond) * f.seconds
        XCTAssertLessThanOrEqual(Double(try XCTUnwrap(f.repaintWindowMisses, "\(f)")), flipped.rounded(), "\(f)")
        XCTAssertGreaterThan(try XCTUnwrap(f.framesComposedPerSecond), 0)
        // Where the lag beyond the renders goes: an applied result reaches the screen at a flip after it (so no
        // sooner than the flip in flight allows), and a render that waited is dispatched after the one before.
        let shownP50 = try XCTUnwrap(f.stormAppliedToShownMsP50, "\(f)"), shownP99 = try XCTUnwrap(f.stormAppliedToShownMsP99, "\(f)")
        XCTAssertGreaterThan(shownP50, 0)
        XCTAssertLessThanOrEqual(shownP50, shownP99)
        XCTAssertLessThan(shownP50, try XCTUnwrap(f.storm.lagMsMax), "part of the lag, not more than it")
        // A pending render waits only when an update lands while one is in flight; on a quiet machine the short run
        // may never do that, and the figure is then null (measured or null, never made up). The wait is part of the
        // lag of the update that waited.
        if let wait = f.stormPendingDispatchWaitMsP99 { XCTAssertLessThanOrEqual(wait, try XCTUnwrap(f.storm.lagMsMax), "\(f)") }
        XCTAssertGreaterThan(flipped, 0)
        // A vblank of the run either showed a flip or was missed: missed ones are at most the run's vblanks, less
        // those that flipped.
        let missed = try XCTUnwrap(f.missedVblanks, "flips were counted during the storm")
        let vblanks = f.seconds * 1000 / f.frameMs
        XCTAssertLessThanOrEqual(Double(missed), (vblanks - flipped).rounded(.up) + 3, "\(f)")
    }

    /// With one worker, the label's and clock's bounds hold one storm render more.
    func testWithTheWindowOffItsFiguresAreNullAndOneWorkerAddsAStormRenderToTheOthersBounds() throws {
        let f = try UpdateStorm.run(mode: OutputMode(width: 640, height: 360, refreshMilliHz: 60_000), seconds: 1,
                                    workers: 1, stormParagraphs: 50, window: .off)
        XCTAssertEqual(f.repaintWindow, "off")
        XCTAssertNil(f.repaintLeadMs)
        XCTAssertNil(f.repaintWindowMisses)
        XCTAssertNotNil(f.stormLagBeyondRendersMsP99, "\(f)")
        XCTAssertEqual(f.workers, 1)
        try assertWidgetsJudged(f)
    }

    func testWorkerCountsAreParsedOrRefusedByName() throws {
        XCTAssertEqual(try UpdateStorm.workerCounts(parsing: "1, 2,4"), [1, 2, 4])
        for (text, named) in [("0", "\"0\""), ("2,x", "\"x\""), ("", "\"\""), ("2,2", "2 is named twice")] {
            XCTAssertThrowsError(try UpdateStorm.workerCounts(parsing: text), text) { error in
                XCTAssertTrue("\(error)".contains(named), "\(error)")
            }
        }
        let defaults = UpdateStorm.defaultWorkerCounts
        XCTAssertEqual(Array(defaults.prefix(2)), [1, 2])
        XCTAssertEqual(Set(defaults), Set([1, 2, RenderQueuePool.activeProcessorCount]))
        XCTAssertEqual(Set(defaults).count, defaults.count)
    }

    /// The label's target from its render alone, the clock's from its own, each verdict from the figure beside it.
    private func assertWidgetsJudged(_ f: UpdateStorm.Figures, file: StaticString = #filePath, line: UInt = #line) throws {
        let labelRender = try XCTUnwrap(f.labelRenderMs, "\(f)", file: file, line: line)
        let clockRender = try XCTUnwrap(f.clockRenderMs, "\(f)", file: file, line: line)
        XCTAssertGreaterThan(labelRender, 0, file: file, line: line)
        XCTAssertGreaterThan(clockRender, 0, file: file, line: line)
        let oneWorker = f.workers == 1
        let labelTarget = try XCTUnwrap(f.labelTargetLagMs, file: file, line: line)
        let clockTarget = try XCTUnwrap(f.clockTargetLagMs, file: file, line: line)
        let stormP99 = oneWorker ? try XCTUnwrap(f.stormDispatchToAppliedMsP99, file: file, line: line) : 0
        let stormMax = oneWorker ? try XCTUnwrap(f.stormDispatchToAppliedMsMax, file: file, line: line) : 0
        XCTAssertEqual(labelTarget, 2 * labelRender + 2 * f.frameMs + stormP99, accuracy: 1e-9, file: file, line: line)
        XCTAssertEqual(clockTarget, clockRender + UpdateStorm.clockTickMarginMs + 2 * f.frameMs + stormMax, accuracy: 1e-9,
                       file: file, line: line)
        XCTAssertEqual(f.labelTargetMet, f.label.lagMsP99.map { $0 <= labelTarget }, file: file, line: line)
        XCTAssertEqual(f.clockTargetMet, f.clock.lagMsMax.map { $0 <= clockTarget }, file: file, line: line)
        let verdicts = [f.stormTargetMet, f.labelTargetMet, f.clockTargetMet]
        XCTAssertEqual(f.targetMet, verdicts.contains(nil) ? nil : verdicts.allSatisfy { $0 == true }, file: file, line: line)
    }

    func testTheVersionIsReadFromTheTextItsUpdateSet() {
        XCTAssertEqual(UpdateStorm.version(UpdateStorm.stormText(42), "storm#"), 42)
        XCTAssertEqual(UpdateStorm.version("label#7", "label#"), 7)
        XCTAssertNil(UpdateStorm.version("label#7", "storm#"))
    }
}
