import Foundation

/// `kioskd bench --scenario update-storm` as text: one table of every run side by side, then each run's detail.
extension UpdateStorm.Scenario {
    public var table: String {
        func cell(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
        var lines = [
            "update-storm: a large wrapped text updated at \(UpdateStorm.stormHz) Hz beside a seconds clock and a label at \(UpdateStorm.labelHz) Hz, headless; each widget judged, side by side",
            "  " + ["workers", "window", "storm beyond p99", "label p50/p99 (target)", "clock p50/max (target)", "composed/s", "verdict"]
                .enumerated().map { cell($1, Self.widths[$0]) }.joined(),
        ]
        for run in runs {
            for f in [run.windowOff, run.windowAuto] {
                lines.append("  " + [
                    String(run.workers), f.repaintWindow,
                    "\(format(f.stormLagBeyondRendersMsP99, "%.1f")) \(verdict(f.stormTargetMet))",
                    "\(format(f.label.lagMsP50, "%.0f"))/\(format(f.label.lagMsP99, "%.0f")) (\(format(f.labelTargetLagMs, "%.0f"))) \(verdict(f.labelTargetMet))",
                    "\(format(f.clock.lagMsP50, "%.0f"))/\(format(f.clock.lagMsMax, "%.0f")) (\(format(f.clockTargetLagMs, "%.0f"))) \(verdict(f.clockTargetMet))",
                    format(f.framesComposedPerSecond, "%.1f"), verdict(f.targetMet),
                ].enumerated().map { cell($1, Self.widths[$0]) }.joined())
            }
        }
        lines.append("  target: storm lag beyond its renders p99 within 1 frame (issue 10); label lag p99 within 2 x its render + 2 frames; clock lag max within its render + 2 frames; with 1 worker, one storm render more for label and clock")
        lines.append("  target as kioskd ships (repaint window off), every worker count: \(verdict(targetMet))")
        for run in runs { lines += [run.windowOff.table, run.windowAuto.table] }
        return lines.joined(separator: "\n")
    }

    private static let widths = [9, 8, 19, 28, 28, 12, 8]
}

extension UpdateStorm.Figures {
    public var table: String {
        func row(_ name: String, _ lag: UpdateStorm.WidgetLag, render: Double?) -> String {
            "    \(name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(String(lag.updates).padding(toLength: 9, withPad: " ", startingAt: 0))"
                + [format(lag.lagMsP50, "%.1f"), format(lag.lagMsP99, "%.1f"), format(lag.lagMsMax, "%.1f"), format(render, "%.1f")]
                .map { $0.padding(toLength: 10, withPad: " ", startingAt: 0) }.joined()
                + "worst: \(format(lag.worstWaitForDispatchMs, "%.1f")) to dispatch, \(format(lag.worstRenderMs, "%.1f")) render, \(format(lag.worstAppliedToShownMs, "%.1f")) to shown"
        }
        return [
            "  \(workers) worker(s), repaint window \(repaintWindow), \(mode), \(format(seconds, "%.1f")) s; storm at \(format(stormUpdatesPerSecond, "%.1f")) Hz, label at \(format(labelUpdatesPerSecond, "%.1f")) Hz",
            "    widget   updates  lag p50   lag p99   lag max   render alone (ms), the worst update's lag split",
            row("storm", storm, render: stormRenderMs), row("clock", clock, render: clockRenderMs), row("label", label, render: labelRenderMs),
            "    storm \(format(stormDispatchToAppliedMsP50, "%.1f")) ms dispatch to applied (p50); frames composed \(format(framesComposedPerSecond, "%.1f"))/s, flipped \(format(framesFlippedPerSecond, "%.1f"))/s, \(format(missedVblanks)) vblanks missed",
            "    storm pending render waited \(format(stormPendingDispatchWaitMsP99, "%.1f")) ms to dispatch (p99); applied to shown \(format(stormAppliedToShownMsP50, "%.1f")) ms p50, \(format(stormAppliedToShownMsP99, "%.1f")) ms p99; window lead \(format(repaintLeadMs, "%.1f")) ms, \(format(repaintWindowMisses)) window misses, \(format(repaintWindowNearMisses)) near misses",
            "    storm lag beyond its renders \(format(stormLagBeyondRendersMsP50, "%.1f")) ms p50, \(format(stormLagBeyondRendersMsP99, "%.1f")) ms p99 against \(format(frameMs, "%.1f")): \(verdict(stormTargetMet)); label lag p99 against \(format(labelTargetLagMs, "%.1f")): \(verdict(labelTargetMet)); clock lag max against \(format(clockTargetLagMs, "%.1f")): \(verdict(clockTargetMet))",
        ].joined(separator: "\n")
    }
}

/// A figure for the report: the number, or "null" where it was not measured.
private func format(_ value: Double?, _ spec: String) -> String { value.map { String(format: spec, $0) } ?? "null" }
private func format(_ value: Int?) -> String { value.map(String.init) ?? "null" }
private func verdict(_ met: Bool?) -> String { met.map { $0 ? "met" : "NOT met" } ?? "null" }
