import Foundation
import KioskCore
import KioskRender

/// Not product code: the touch-to-screen latency of a button. For each tap, from the kernel timestamp of the
/// touch-down (CLOCK_MONOTONIC, as libinput reports it) to the vblank timestamp of the flip whose frame first shows
/// the button's pressed look. Observed on the engine, never assumed: the button body's render dispatched with the
/// pressed look (`willDisplay`), that render applied (`didDisplay`), the next present composing it, and the flip
/// after that present putting it on screen.
///
/// Whoever drives the taps calls `touchDown(kernelMicroseconds:)` as each touch-down is handled, before the router
/// sees it. It chains the layer's and the engine's hooks it uses (`willDisplay`, `didDisplay`, `onPresent`,
/// `onFlip`). Main thread, with the engine.
public final class TapLatencyProbe {
    /// Every figure measured, or nil (JSON null).
    public struct Figures: Codable, Sendable, Equatable {
        public var taps: Int
        /// Taps whose pressed look reached the screen.
        public var shown: Int
        public var latencyMsP50: Double?
        public var latencyMsP99: Double?
        public var latencyMsMax: Double?
        /// Where the time goes, p50 of each step from the touch-down's kernel time: kioskd has the event, the
        /// pressed render is applied, the frame holding it is presented (the flip follows at the next vblank).
        public var handledMsP50: Double?
        public var appliedMsP50: Double?
        public var presentedMsP50: Double?
        /// kioskd's own part, p50: from the moment it has the touch-down to the commit of the frame showing the
        /// pressed look, both read on kioskd's clock (the kernel's input queue and the flip that follows the commit
        /// are not in it).
        public var kioskdMsP50: Double?
        /// p50 from the touch-down's kernel time to the pressed render's dispatch to a worker.
        public var dispatchedMsP50: Double?
        /// Taps whose pressed render landed while a flip was still in flight, so its frame waited for that flip.
        public var flipPendingAtApply: Int
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
            case handledMsP50 = "handled_ms_p50", appliedMsP50 = "applied_ms_p50", presentedMsP50 = "presented_ms_p50"
            case kioskdMsP50 = "kioskd_ms_p50", dispatchedMsP50 = "dispatched_ms_p50", flipPendingAtApply = "flip_pending_at_apply"
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
            try c.encode(appliedMsP50, forKey: .appliedMsP50)
            try c.encode(presentedMsP50, forKey: .presentedMsP50)
            try c.encode(kioskdMsP50, forKey: .kioskdMsP50)
            try c.encode(dispatchedMsP50, forKey: .dispatchedMsP50)
            try c.encode(flipPendingAtApply, forKey: .flipPendingAtApply)
            try c.encode(refreshMs, forKey: .refreshMs)
            try c.encode(buttonRenderMs, forKey: .buttonRenderMs)
            try c.encode(targetMs, forKey: .targetMs)
            try c.encode(targetMet, forKey: .targetMet)
        }
    }

    public let button: Layer
    private let engine: LayerEngine
    private var taps = 0
    private var downMicroseconds: UInt64?
    private var dispatchedPressed = false
    private var appliedPressed = false
    private var presentedPressed = false
    private var latencies = LatencyRecorder()
    private var handled = LatencyRecorder(), applied = LatencyRecorder(), presented = LatencyRecorder()
    private var ownPart = LatencyRecorder(), dispatched = LatencyRecorder()
    private var flipPendingAtApply = 0
    /// When kioskd had the current tap's touch-down, on its clock.
    private var handledAt: MonotonicInstant?
    /// Each tap's latency in milliseconds, in order.
    public private(set) var samplesMs: [Double] = []

    /// `button` is the button's body layer (`<id>.body`), which draws its `ButtonContent`.
    public init(engine: LayerEngine, button: Layer) {
        self.engine = engine
        self.button = button
        let willDisplay = button.willDisplay, didDisplay = button.didDisplay
        button.willDisplay = { [weak self] layer in
            willDisplay?(layer)
            guard let self else { return }
            let pressed = (layer.content as? ButtonContent)?.state == .pressed
            if pressed, !dispatchedPressed, let down = downMicroseconds { dispatched.record(Self.since(down)) }
            dispatchedPressed = pressed
        }
        button.didDisplay = { [weak self] layer, finished in
            didDisplay?(layer, finished)
            guard let self, finished, dispatchedPressed, let down = downMicroseconds, !appliedPressed else { return }
            appliedPressed = true
            applied.record(Self.since(down))
            if engine.backend?.isFlipPending == true { flipPendingAtApply += 1 }
        }
        let onPresent = engine.onPresent, onFlip = engine.onFlip
        engine.onPresent = { [weak self] damage in
            onPresent?(damage)
            guard let self, appliedPressed, !presentedPressed, let down = downMicroseconds else { return }
            presentedPressed = true
            presented.record(Self.since(down))
            if let handledAt { ownPart.record(MonotonicInstant.now() - handledAt) }
        }
        engine.onFlip = { [weak self] event in
            onFlip?(event)
            self?.flipped(event)
        }
    }

    /// Finds the body layer of the button with widget id `id` under `root`.
    public static func buttonBody(_ id: String, in root: Layer) -> Layer? {
        if root.name == "\(id).body" { return root }
        for child in root.children { if let found = buttonBody(id, in: child) { return found } }
        return nil
    }

    /// A touch-down on the button, with its kernel time.
    public func touchDown(kernelMicroseconds: UInt64) {
        taps += 1
        downMicroseconds = kernelMicroseconds
        dispatchedPressed = false
        appliedPressed = false
        presentedPressed = false
        handledAt = MonotonicInstant.now()
        handled.record(Self.since(kernelMicroseconds))
    }

    /// From a kernel time (microseconds, CLOCK_MONOTONIC) to now.
    private static func since(_ microseconds: UInt64) -> Duration {
        .nanoseconds(Int64(MonotonicInstant.now().nanoseconds) - Int64(microseconds) * 1000)
    }

    /// Taps whose pressed look has been flipped so far.
    public var shownCount: Int { samplesMs.count }

    private func flipped(_ event: FlipEvent) {
        guard presentedPressed, let down = downMicroseconds else { return }
        let nanoseconds = Int64(event.timestamp.nanoseconds) - Int64(down) * 1000
        latencies.record(.nanoseconds(nanoseconds))
        samplesMs.append(Double(nanoseconds) / 1e6)
        downMicroseconds = nil
        presentedPressed = false
        appliedPressed = false
    }

    public func figures(refresh: Duration) -> Figures {
        let refreshMs = refresh.milliseconds
        let renderMs = Self.isolatedRenderMs(button)
        let summary = latencies.count > 0 ? latencies.summary : nil
        let target = renderMs.map { refreshMs + $0 }
        func p50(_ recorder: LatencyRecorder) -> Double? { recorder.count > 0 ? recorder.summary.p50 : nil }
        return Figures(taps: taps, shown: samplesMs.count, latencyMsP50: summary?.p50, latencyMsP99: summary?.p99,
                       latencyMsMax: summary?.max, handledMsP50: p50(handled), appliedMsP50: p50(applied),
                       presentedMsP50: p50(presented), kioskdMsP50: p50(ownPart), dispatchedMsP50: p50(dispatched),
                       flipPendingAtApply: flipPendingAtApply, refreshMs: refreshMs, buttonRenderMs: renderMs, targetMs: target,
                       targetMet: target.flatMap { t in summary.map { $0.p50 <= t } })
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
