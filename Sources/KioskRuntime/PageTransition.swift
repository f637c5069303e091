import KioskCore
import KioskScene

/// One page change with a transition (fade, slide left, slide right, or a cut to a page that must render first),
/// driven by the display link. It waits until the incoming page has nothing left to render (its widgets' renders are done and shown), so the page never
/// slides in half drawn, and gives up waiting after `readinessTimeout` so a failing render cannot block the change.
///
/// A slide moves two full-screen pages every frame, so it is made to cost about a copy of the frame:
/// - once the incoming page is ready, each page in `flattening` is flattened into one surface for the slide
///   (`Layer.rasterizesSubtree`, AsyncDisplayKit's `rasterizesSubtree`), made from its widgets' own finished renders
///   on a worker. The motion starts once the flattenings have landed, so every frame of the slide is two surfaces
///   the compositor writes straight into the scanout buffer (`ShadowCompositor`'s direct frames), but waits at
///   most `flatteningWait` for them: until a flattening lands its page composites widget by widget, which shows
///   the same pixels at several times the cost;
/// - a slide moves the pages by whole pixels, so the compositor copies their pixels instead of filtering them, and
///   the two pages abut exactly;
/// - during a slide the flattened pages prefer overlay planes (`Layer.prefersOverlayPlane`): where the output has
///   two free, the slide only moves planes and composes nothing.
/// A fade is a cross-fade of the two pages as they look: the incoming page fades in as one image over the outgoing
/// one (`Layer.allowsGroupOpacity`), per pixel A·(1−t) + B·t where the incoming page is opaque, rather than each
/// of its widgets fading on its own (where they overlap, the lower ones would show through). It flattens nothing:
/// the compositor composes the group a band of rows at a time.
/// At the end the pages composite their widgets one by one again.
/// Main thread.
final class PageTransition {
    static let readinessTimeout: Duration = .seconds(2)
    /// How long a slide's motion waits, once the incoming page is ready, for its pages' flattenings to land: a few
    /// frames at most, so a slow flattening delays the slide little and the slide composes widget by widget until it
    /// lands.
    static let flatteningWait: Duration = .milliseconds(100)

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
    /// When the incoming page was ready (or the wait for it gave up) and the flattenings were asked for.
    private var readyAt: MonotonicInstant?
    private var startedAt: MonotonicInstant?
    private var ended = false
    /// The pages to flatten for the transition once the incoming page is ready.
    private let flattening: [Layer]
    /// The pages flattened, each with what it had before.
    private var flattened: [(layer: Layer, rasterized: Bool, plane: Bool)] = []
    /// What the incoming page's `allowsGroupOpacity` was before a fade set it.
    private var incomingGroupOpacity: Bool?

    /// - Parameter flattening: the pages (of `incoming` and `outgoing`) to flatten while a slide runs: those
    ///   with nothing moving on them (a ticker or a video would have the whole page render again every frame).
    init(spec: Transition, incoming: Layer, outgoing: Layer, engine: LayerEngine, width: Int, flattening: [Layer] = [],
         onEnd: @escaping () -> Void) {
        self.spec = spec
        self.incoming = incoming
        self.outgoing = outgoing
        self.engine = engine
        self.width = width
        self.onEnd = onEnd
        // A fade is not flattened: its incoming page fades in as one image (an opacity group, composed a band of rows
        // at a time), which looks as a flattened page would without holding two more full-screen surfaces.
        let slides = spec.kind == .slideLeft || spec.kind == .slideRight
        self.flattening = slides && spec.duration > 0 ? flattening.filter { $0 === incoming || $0 === outgoing } : []
    }

    private func flatten() {
        for page in flattening {
            flattened.append((page, page.rasterizesSubtree, page.prefersOverlayPlane))
            page.rasterizesSubtree = true
            page.prefersOverlayPlane = true
        }
    }

    func start() {
        // Shown but fully transparent (or off screen) until ready: hidden layers render too, so it is usually
        // ready at once.
        incoming.isHidden = false
        incoming.zPosition = 1
        outgoing.zPosition = 0
        if spec.kind == .fade {
            incomingGroupOpacity = incoming.allowsGroupOpacity
            incoming.allowsGroupOpacity = true
        }
        apply(progress: 0)
        engine.addAnimation(target: self) { transition, tick in transition.step(tick) }
    }

    private func step(_ tick: DisplayTick) -> Bool {
        guard !ended else { return false }
        let now = tick.nextVblank
        let first = firstTick ?? now
        firstTick = first
        if startedAt == nil {
            if readyAt == nil {
                guard !engine.isRendering(incoming) || now - first >= Self.readinessTimeout else { return true }
                flatten()
                readyAt = now
                onReady?(now - first)
            }
            let landed = flattened.allSatisfy { $0.layer.renderedSurface != nil }
            guard landed || now - readyAt! >= Self.flatteningWait else { return true }
            startedAt = now
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
        // Whole pixels: the incoming page's offset, rounded, and the outgoing page one width beside it.
        let offset = ((1 - p) * w).rounded()
        switch spec.kind {
        case .cut:
            incoming.opacity = p >= 1 ? 1 : 0
        case .fade:
            incoming.opacity = p
        case .slideLeft:
            incoming.transform = .translation(x: offset, y: 0)
            outgoing.transform = .translation(x: offset - w, y: 0)
        case .slideRight:
            incoming.transform = .translation(x: -offset, y: 0)
            outgoing.transform = .translation(x: w - offset, y: 0)
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
        unflatten()
        onEnd()
    }

    /// Stops without moving the layers (the scene they belong to is going away); flattened pages are put back.
    func cancel() {
        ended = true
        unflatten()
    }

    /// The pages composite their widgets one by one again (those still current show their own renders at once).
    private func unflatten() {
        if let incomingGroupOpacity {
            incoming.allowsGroupOpacity = incomingGroupOpacity
            self.incomingGroupOpacity = nil
        }
        for (page, rasterized, plane) in flattened {
            page.prefersOverlayPlane = plane
            page.rasterizesSubtree = rasterized
        }
        flattened = []
    }
}
