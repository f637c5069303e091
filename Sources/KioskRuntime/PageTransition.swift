import KioskCore
import KioskScene

/// One page change with a transition (fade, slide left, slide right, or a cut to a page that must render first),
/// driven by the display link. It waits until the incoming page has nothing left to render (its widgets' renders are done and shown), so the page never
/// slides in half drawn, and gives up waiting after `readinessTimeout` so a failing render cannot block the change.
/// Main thread.
final class PageTransition {
    static let readinessTimeout: Duration = .seconds(2)

    let spec: Transition
    let incoming: Layer
    let outgoing: Layer
    /// The pages' names, for the stage's page ranges.
    var incomingPage = ""
    var outgoingPage = ""
    /// Called once the incoming page is ready (or the wait gave up), with how long it waited: `page_ready_ms`.
    var onReady: ((Duration) -> Void)?
    private unowned let engine: LayerEngine
    private let width: Int
    private let onEnd: () -> Void
    private var firstTick: MonotonicInstant?
    private var startedAt: MonotonicInstant?
    private var ended = false

    init(spec: Transition, incoming: Layer, outgoing: Layer, engine: LayerEngine, width: Int, onEnd: @escaping () -> Void) {
        self.spec = spec
        self.incoming = incoming
        self.outgoing = outgoing
        self.engine = engine
        self.width = width
        self.onEnd = onEnd
    }

    func start() {
        // Shown but fully transparent (or off screen) until ready: hidden layers render too, so it is usually
        // ready at once.
        incoming.isHidden = false
        incoming.zPosition = 1
        outgoing.zPosition = 0
        apply(progress: 0)
        engine.addAnimation(target: self) { transition, tick in transition.step(tick) }
    }

    private func step(_ tick: DisplayTick) -> Bool {
        guard !ended else { return false }
        let now = tick.nextVblank
        let first = firstTick ?? now
        firstTick = first
        if startedAt == nil {
            guard !engine.isRendering(incoming) || now - first >= Self.readinessTimeout else { return true }
            startedAt = now
            onReady?(now - first)
        }
        let elapsed = (now - startedAt!).milliseconds / 1000
        // A cut (to a page that had to render first) completes at once.
        let f = spec.duration > 0 && spec.kind != .cut ? min(elapsed / spec.duration, 1) : 1
        apply(progress: StyleMapping.timing(spec.easing).value(at: f))
        if f >= 1 { finish() }
        return f < 1
    }

    /// `p` 0 shows the outgoing page, 1 the incoming one.
    private func apply(progress p: Double) {
        let w = Double(width)
        switch spec.kind {
        case .cut:
            incoming.opacity = p >= 1 ? 1 : 0
        case .fade:
            incoming.opacity = p
        case .slideLeft:
            incoming.transform = .translation(x: (1 - p) * w, y: 0)
            outgoing.transform = .translation(x: -p * w, y: 0)
        case .slideRight:
            incoming.transform = .translation(x: -(1 - p) * w, y: 0)
            outgoing.transform = .translation(x: p * w, y: 0)
        }
    }

    /// Jumps to the end: the incoming page alone, in place.
    func finish() {
        guard !ended else { return }
        ended = true
        incoming.opacity = 1
        incoming.transform = .identity
        incoming.zPosition = 0
        outgoing.isHidden = true
        outgoing.opacity = 1
        outgoing.transform = .identity
        onEnd()
    }

    /// Stops without touching the layers (the scene they belong to is going away).
    func cancel() { ended = true }
}
