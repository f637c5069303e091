import Foundation
import KioskCore
import KioskRender

/// Not product code: the touch-to-screen latency of a button. For each tap, from the kernel timestamp of the
/// touch-down (CLOCK_MONOTONIC, as libinput reports it) to the vblank timestamp of the flip whose frame first shows
/// the button's pressed look. Observed on the engine, never assumed: the first present after the touch-down at which
/// the button's pressed layer (`<id>.pressed`, rendered ahead) is composited, and the flip after that present.
/// Renders of the button's layers between the touch-down and that present are counted (a press needs none).
///
/// Whoever drives the taps calls `touchDown(kernelMicroseconds:)` as each touch-down is handled, before the router
/// sees it. It chains the layers' `willRender` hooks and listens to the engine's presents and flips beside the
/// engine's other listeners. Main thread, with the engine.
public final class TapLatencyProbe {
    /// Every figure measured, or nil (JSON null).
    public struct Figures: Codable, Sendable, Equatable {
        public var taps: Int
        /// Taps whose pressed look reached the screen.
        public var shown: Int
        public var latencyMsP50: Double?
        public var latencyMsP99: Double?
        public var latencyMsMax: Double?
        /// Where the time goes, p50 of each step from the touch-down's kernel time: kioskd has the event, the frame
        /// holding the pressed look is presented (the flip follows at the next vblank).
        public var handledMsP50: Double?
        public var presentedMsP50: Double?
        /// kioskd's own part: from the moment it has the touch-down to the commit of the frame showing the pressed
        /// look, both read on kioskd's clock (the kernel's input queue and the flip that follows the commit are not
        /// in it). p50 and max.
        public var kioskdMsP50: Double?
        public var kioskdMsMax: Double?
        /// Renders of the button's layers dispatched between a touch-down and the present showing its pressed look,
        /// over all taps.
        public var rendersDuringPress: Int
        /// Taps whose touch-down came while a flip was still in flight, so their frame waited for that flip.
        public var flipPendingAtDown: Int
        /// How evenly the touch-downs fell over the refresh period, as real touches do: of ten equal parts of the
        /// period after a vblank (the vblank grid of the last flip before each touch-down), how many held at least
        /// one touch-down. Nil when no touch-down came after a flip.
        public var phaseTenthsHit: Int?
        /// The output's refresh period.
        public var refreshMs: Double
        /// The button's render, drawn alone on this thread (median of five).
        public var buttonRenderMs: Double?
        /// The target: one refresh period plus the button's render time.
        public var targetMs: Double?
        /// Whether p50 met the target; nil when either was not measured.
        public var targetMet: Bool?

        enum CodingKeys: String, CodingKey {
            case taps, shown, latencyMsP50 = "latency_ms_p50", latencyMsP99 = "latency_ms_p99", latencyMsMax = "latency_ms_max"
            case handledMsP50 = "handled_ms_p50", presentedMsP50 = "presented_ms_p50"
            case kioskdMsP50 = "kioskd_ms_p50", kioskdMsMax = "kioskd_ms_max", rendersDuringPress = "renders_during_press"
            case flipPendingAtDown = "flip_pending_at_down", phaseTenthsHit = "phase_tenths_hit"
            case refreshMs = "refresh_ms", buttonRenderMs = "button_render_ms", targetMs = "target_ms", targetMet = "target_met"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(taps, forKey: .taps)
            try c.encode(shown, forKey: .shown)
            try c.encode(latencyMsP50, forKey: .latencyMsP50)
            try c.encode(latencyMsP99, forKey: .latencyMsP99)
            try c.encode(latencyMsMax, forKey: .latencyMsMax)
            try c.encode(handledMsP50, forKey: .handledMsP50)
            try c.encode(presentedMsP50, forKey: .presentedMsP50)
            try c.encode(kioskdMsP50, forKey: .kioskdMsP50)
            try c.encode(kioskdMsMax, forKey: .kioskdMsMax)
            try c.encode(rendersDuringPress, forKey: .rendersDuringPress)
            try c.encode(flipPendingAtDown, forKey: .flipPendingAtDown)
            try c.encode(phaseTenthsHit, forKey: .phaseTenthsHit)
            try c.encode(refreshMs, forKey: .refreshMs)
            try c.encode(buttonRenderMs, forKey: .buttonRenderMs)
            try c.encode(targetMs, forKey: .targetMs)
            try c.encode(targetMet, forKey: .targetMet)
        }
    }

    /// The button's pressed layer, which draws its pressed `ButtonContent`.
    public let pressedLook: Layer
    private let engine: LayerEngine
    private var taps = 0
    private var downMicroseconds: UInt64?
    private var presentedPressed = false
    private var latencies = LatencyRecorder()
    private var handled = LatencyRecorder(), presented = LatencyRecorder(), ownPart = LatencyRecorder()
    private var rendersDuringPress = 0
    private var flipPendingAtDown = 0
    /// When kioskd had the current tap's touch-down, on its clock.
    private var handledAt: MonotonicInstant?
    /// The vblank time of the newest flip, whatever it showed.
    public private(set) var lastVblank: MonotonicInstant?
    /// Each touch-down's time after the vblank of the flip before it, in nanoseconds.
    private var sinceVblankNs: [Int64] = []
    /// Each tap's latency in milliseconds, in order.
    public private(set) var samplesMs: [Double] = []
    /// The engine's presents and flips, heard while the probe lives.
    private var engineListeners: [ListenerToken] = []

    /// `pressedLook` is the button's pressed layer (`<id>.pressed`); `bodies` are all the button's drawing layers,
    /// whose renders during a press are counted.
    public init(engine: LayerEngine, pressedLook: Layer, bodies: [Layer]) {
        self.engine = engine
        self.pressedLook = pressedLook
        for body in bodies {
            let willRender = body.willRender
            body.willRender = { [weak self] layer in
                willRender?(layer)
                guard let self, downMicroseconds != nil, !presentedPressed else { return }
                rendersDuringPress += 1
            }
        }
        engineListeners = [
            engine.addPresentListener { [weak self] _ in
                // The probe's own reference to the engine: capturing the parameter would make the engine hold itself.
                guard let self, !presentedPressed, let down = downMicroseconds, self.engine.isOnScreen(pressedLook) else { return }
                presentedPressed = true
                presented.record(Self.since(down))
                if let handledAt { ownPart.record(MonotonicInstant.now() - handledAt) }
            },
            engine.addFlipListener { [weak self] event in self?.flipped(event) },
        ]
    }

    /// Finds the layer named `<id>.<suffix>` under `root` (`body`: the resting look; `pressed`: the pressed one).
    public static func buttonLayer(_ id: String, _ suffix: String, in root: Layer) -> Layer? {
        if root.name == "\(id).\(suffix)" { return root }
        for child in root.children { if let found = buttonLayer(id, suffix, in: child) { return found } }
        return nil
    }

    /// A touch-down on the button, with its kernel time.
    public func touchDown(kernelMicroseconds: UInt64) {
        taps += 1
        downMicroseconds = kernelMicroseconds
        presentedPressed = false
        handledAt = MonotonicInstant.now()
        handled.record(Self.since(kernelMicroseconds))
        if let lastVblank {
            let since = Int64(kernelMicroseconds) * 1000 - Int64(lastVblank.nanoseconds)
            if since >= 0 { sinceVblankNs.append(since) }
        }
        if engine.backend?.isFlipPending == true { flipPendingAtDown += 1 }
    }

    /// From a kernel time (microseconds, CLOCK_MONOTONIC) to now.
    private static func since(_ microseconds: UInt64) -> Duration {
        .nanoseconds(Int64(MonotonicInstant.now().nanoseconds) - Int64(microseconds) * 1000)
    }

    /// Taps whose pressed look has been flipped so far.
    public var shownCount: Int { samplesMs.count }

    private func flipped(_ event: FlipEvent) {
        lastVblank = event.timestamp
        guard presentedPressed, let down = downMicroseconds else { return }
        let nanoseconds = Int64(event.timestamp.nanoseconds) - Int64(down) * 1000
        latencies.record(.nanoseconds(nanoseconds))
        samplesMs.append(Double(nanoseconds) / 1e6)
        downMicroseconds = nil
        presentedPressed = false
    }

    public func figures(refresh: Duration) -> Figures {
        let refreshMs = refresh.milliseconds
        let renderMs = Self.isolatedRenderMs(pressedLook)
        let summary = latencies.count > 0 ? latencies.summary : nil
        let target = renderMs.map { refreshMs + $0 }
        func p50(_ recorder: LatencyRecorder) -> Double? { recorder.count > 0 ? recorder.summary.p50 : nil }
        let period = max(Int64(refresh.nanosecondsClamped), 1)
        let tenths = Set(sinceVblankNs.map { ($0 % period) * 10 / period })
        return Figures(taps: taps, shown: samplesMs.count, latencyMsP50: summary?.p50, latencyMsP99: summary?.p99,
                       latencyMsMax: summary?.max, handledMsP50: p50(handled), presentedMsP50: p50(presented),
                       kioskdMsP50: p50(ownPart), kioskdMsMax: ownPart.count > 0 ? ownPart.summary.max : nil,
                       rendersDuringPress: rendersDuringPress, flipPendingAtDown: flipPendingAtDown,
                       phaseTenthsHit: sinceVblankNs.isEmpty ? nil : tenths.count, refreshMs: refreshMs,
                       buttonRenderMs: renderMs, targetMs: target, targetMet: target.flatMap { t in summary.map { $0.p50 <= t } })
    }

    /// Median of five draws of the layer's content at its size on this thread, in milliseconds.
    static func isolatedRenderMs(_ layer: Layer) -> Double? {
        guard let content = layer.content else { return nil }
        var times: [Double] = []
        for _ in 0..<5 {
            let surface = LayerSurface(size: layer.frame.size)
            let t0 = MonotonicInstant.now()
            guard (try? content.draw(into: surface, isCancelled: { false })) != nil else { return nil }
            times.append((MonotonicInstant.now() - t0).milliseconds)
        }
        return times.sorted()[2]
    }
}
