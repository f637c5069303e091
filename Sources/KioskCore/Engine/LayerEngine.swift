import Logging

private let logger = Logger(label: "kioskd.engine")

/// Drives one output: the layer tree, its renders on the pool, composition and presentation, and the display
/// link, from four `MainLoop` observers run each iteration before the loop sleeps (YYAsyncLayer + YYTransaction +
/// CADisplayLink, on DRM):
///
/// 1. animations (`ObserverOrder.animations`): after a flip, the display link ticks its live targets;
/// 2. layout (`.layout`): `layout` hooks of layers that asked, parents first;
/// 3. display (`.display`): a render for each layer that asked, coalesced since the last iteration: `willDisplay`,
///    sentinel capture, then `content.draw` on the pool into a fresh surface of the layer's size. A layer with a
///    render in flight waits for it: at most one render per layer is in flight and at most one more pending, and
///    the pending one is dispatched when the first is back, so it draws the newest data;
/// 4. commit (`.commit`, the last): finished renders are applied (`didDisplay`) unless they can never be shown
///    (layer freed, content removed) or a newer render of the layer is already shown; a newer request does not
///    discard a finished render, so a layer updated faster than it renders still advances. Results are held back
///    only while the transaction group of a newly shown subtree waits for its first batch. The tree is flattened
///    (`LayerFlattener`), diffed with the previous frame into damage (`FrameDiff`), and composed; if no flip is
///    pending, the damage is copied into a free buffer and presented.
///
/// Frame pacing: at most one flip in flight. A composition made while a flip is pending waits for that flip and
/// is presented from its completion; a newer composition before then replaces it (`compositions_replaced`), so
/// the newest state wins. Flips come only from presents, so while the display link has live targets and nothing
/// changed, the engine presents the unchanged frame to keep the ticks coming; with no targets and no changes it
/// arms no timer and causes no wake-up.
///
/// Output rotation: the tree is laid out in the compositor's `sceneSize` (the mode size turned by its rotation); the
/// compositor alone maps scene coordinates onto the panel.
///
/// Display power: while the output is off (`setDisplayPower(false)`) renders and compositions go on as usual, but
/// nothing is presented, so no flips complete and the display link gets no ticks: animations freeze where they
/// are (their clocks are flip timestamps) and resume when the output is lit again.
///
/// Lives on the main thread, with the loop, the backend, the compositor and the layer tree. Render workers see
/// only immutable values: the content, a size, a sentinel capture, and the inbox they deliver to.
public final class LayerEngine {
    public let loop: MainLoop
    public let backend: any DisplayBackend
    public let compositor: any Compositing
    public let pool: RenderQueuePool
    /// The root of the tree: the size of the scene (the screen, turned by the output rotation), black unless changed.
    public let rootLayer: Layer
    /// Layers waiting for the next layout and display observers.
    public let transaction = Transaction()
    /// Ticks on flip events while it has live targets; `addAnimation` registers with it.
    public let displayLink: DisplayLink
    /// Called with every flip event, after the engine's bookkeeping (for a watchdog, readiness notification, ...).
    public var onFlip: ((FlipEvent) -> Void)?
    /// Called when a layer's render failed (bad markup, an unreadable image): the layer's name and why. The layer
    /// keeps what it showed before.
    public var onRenderFailed: ((_ layer: String, _ message: String) -> Void)?
    /// Called after a newly composed frame (not an unchanged one) was queued for scanout, with the damage copied.
    public var onPresent: ((_ damage: [Rect]) -> Void)?
    /// Called for every fault on the frame path (a failed present, master lost, a flip timeout, the device gone),
    /// after it was logged and counted: for the control socket's `error` event.
    public var onFault: ((FrameFault) -> Void)?
    /// Called once when the frame path cannot go on (see `FatalFrameError`): the caller exits non-zero.
    public var onFatal: ((FatalFrameError) -> Void)?

    private enum RunState { case created, running, stopped }

    private var state = RunState.created
    private let screen: Rect
    private var observers: [ObserverHandle] = []
    private let inbox: RenderInbox
    let waker: Waker
    private var synchronousOutputs: [RenderOutput] = []
    private var inFlight: [UInt64: RenderRequest] = [:]
    private var groups: [ObjectIdentifier: TransactionGroupState] = [:]
    private var lastRenderID: UInt64 = 0
    private var needsComposite = true
    private var forcedDamage: [Rect] = []
    private var lastFrame = FrameDiff.Record()
    /// A composition is in the shadow buffer that no scanout buffer has received yet.
    private var compositionAwaitingPresent = false
    /// The flip the animations observer has not ticked the display link for yet.
    private var pendingTick: FlipEvent?
    /// False from `setDisplayPower(false)` until the output is lit again: nothing is presented meanwhile.
    private var presentsEnabled = true
    var counters = EngineStats()
    /// Present and flip faults: holds, retry and regain timers, the flip deadline (see `FrameFaults.swift`).
    var faults = FrameFaultState()
    private var renderTimes: [String: LatencyRecorder] = [:]
    private var bytesCopied = ByteCountRecorder()
    private var fpsCounter = FPSCounter()
    /// `captureScreen` requests waiting for the next present, and the copy taken for the pending flip with the
    /// requests it answers when that flip completes.
    private var capturesAwaitingPresent: [([UInt8]?) -> Void] = []
    private var capturedForFlip: (pixels: [UInt8], waiting: [([UInt8]?) -> Void])?

    /// Layout hooks may ask for more layout; this many passes run in one observer before the rest waits for the
    /// next iteration, so a hook that always asks again cannot hang the loop.
    static let layoutPassLimit = 4

    /// - Throws: `DisplayError` when the compositor's size is not the output's mode size.
    public init(loop: MainLoop, backend: any DisplayBackend, compositor: any Compositing, pool: RenderQueuePool = RenderQueuePool()) throws {
        let size = backend.info.mode.size
        guard compositor.size == size else {
            throw DisplayError("\(backend.info.connector): compositor is \(compositor.size), the mode is \(size)")
        }
        self.loop = loop
        self.backend = backend
        self.compositor = compositor
        self.pool = pool
        screen = Rect(size: compositor.sceneSize)
        displayLink = DisplayLink(frameDuration: backend.info.mode.frameDuration)
        // The waker only has to end the loop's sleep: the commit observer of the next iteration drains the inbox.
        waker = try loop.makeWaker {}
        inbox = RenderInbox(waker: waker)
        rootLayer = Layer(frame: screen, name: "root")
        rootLayer.backgroundColor = .black
        rootLayer.attach(to: self)

        observers = [
            loop.addObserver(order: ObserverOrder.animations, activities: .beforeWaiting) { [weak self] _ in self?.tickAnimations() },
            loop.addObserver(order: ObserverOrder.layout, activities: .beforeWaiting) { [weak self] _ in self?.runLayout() },
            loop.addObserver(order: ObserverOrder.display, activities: .beforeWaiting) { [weak self] _ in self?.dispatchRenders() },
            loop.addObserver(order: ObserverOrder.commit, activities: .beforeWaiting) { [weak self] _ in self?.commit() },
        ]
    }

    deinit {
        for observer in observers { observer.cancel() }
    }

    // MARK: Lifecycle

    /// Starts the backend (modeset, first black buffer); the next commit composes and presents the whole screen.
    public func start() throws {
        precondition(state == .created, "LayerEngine.start: called twice")
        backend.onDeviceLost = { [weak self] error in self?.deviceLost(error) }
        try backend.start(on: loop) { [weak self] event in self?.flipCompleted(event) }
        state = .running
        redrawEverything()
    }

    /// Stops at a frame boundary: removes the observers, lets the backend finish a pending flip and restore the
    /// CRTC, and forgets renders in flight (their results are discarded when they arrive).
    public func stop() {
        guard state == .running else { return }
        state = .stopped
        for observer in observers { observer.cancel() }
        observers = []
        faults.cancelTimers()
        backend.stop()
        for request in inFlight.values where request.layer?.renderInFlight == request.id { request.layer?.renderInFlight = nil }
        // Captures still waiting get the last frame shown, as the front buffer holds it.
        deliverCaptures(frontBuffer: true)
        inFlight.removeAll()
        groups.removeAll()
        synchronousOutputs.removeAll()
        _ = inbox.drain()
    }

    /// Recomposes and copies the whole screen at the next commit: after a modeset or when the scanout buffers were
    /// reallocated.
    public func redrawEverything() {
        compositor.invalidateBuffers()
        forcedDamage = [screen]
        needsComposite = true
    }

    // MARK: State

    /// Telemetry so far, with the loop's counters and the pool's queue as they are now.
    public var stats: EngineStats {
        var stats = counters
        stats.bytesCopiedPerFrame = bytesCopied.summary
        stats.renderMs = renderTimes.mapValues(\.summary)
        stats.fps = fpsCounter.fps
        stats.loopIterations = loop.iterations
        stats.loopWakeups = loop.wakeups
        stats.renderStrategy = pool.strategy
        stats.renderWorkers = pool.workerCount
        stats.renderJobsQueued = pool.queuedJobCount
        stats.renderJobsRunning = pool.runningJobCount
        let health = self.health
        stats.healthy = health.isHealthy
        stats.healthReason = health.reason
        return stats
    }

    /// Whether the output is lit (see `setDisplayPower`).
    public var isDisplayPoweredOn: Bool { backend.isPoweredOn }

    /// Blanks (`false`) or lights (`true`) the output; setting the state it is already in does nothing.
    ///
    /// Off: a pending flip completes first (the backend waits for it), then the output goes dark. Layers keep
    /// rendering and the shadow buffer keeps being composed, but nothing is presented, no frame counts as
    /// presented, and the display link gets no ticks, so animations freeze. On: the whole screen is recomposed and
    /// the newest composition is presented as a full copy at the next commit; flips and ticks resume with it.
    ///
    /// - Throws: `DisplayError` from the backend (naming the connector and errno); the power state is then
    ///   unchanged.
    public func setDisplayPower(_ on: Bool) throws {
        guard on != backend.isPoweredOn else { return }
        if on {
            try backend.setPower(true)
            presentsEnabled = true
            redrawEverything()
            waker.wake()
        } else {
            // Set before the backend waits for a pending flip: that flip's callback must not present another frame.
            presentsEnabled = false
            do {
                try backend.setPower(false)
            } catch {
                presentsEnabled = true
                throw error
            }
            // The pending flip completed while the backend waited for it; no other flip comes until lit again.
            deliverCaptures(frontBuffer: true)
        }
    }

    /// The frame on screen now, copied from the compositor's shadow buffer (cached RAM, never the write-combined
    /// scanout buffer): XRGB8888 rows of `backend.info.mode.size` (panel coordinates, whatever the rotation),
    /// stride = width * 4. Nil when the shadow buffer does not hold that frame at this moment (nothing flipped
    /// yet, a flip pending, or a newer composition waiting); `captureScreen(then:)` waits for the moment instead.
    public func screenshot() -> [UInt8]? {
        shadowHoldsScreen ? compositor.snapshot() : nil
    }

    /// Calls `completion` on the main thread with the frame on screen (as `screenshot()`). When the shadow buffer
    /// holds that frame, it is copied at once. Otherwise the copy is taken when the shadow buffer holds the frame
    /// being presented (at once when the pending flip's frame is still the newest composition, else at the next
    /// present) and handed over when that frame's flip completes, so a scene that changes every frame cannot
    /// starve a capture; before the first flip, that is the first frame. Nil when the engine is not running.
    /// While the output is off no flip is coming: the frame is read from the backend's front buffer instead.
    public func captureScreen(then completion: @escaping ([UInt8]?) -> Void) {
        if state != .running {
            completion(nil)
        } else if shadowHoldsScreen {
            completion(compositor.snapshot())
        } else if !presentsEnabled {
            completion(backend.frontBufferSnapshot())
        } else if backend.isFlipPending, !compositionAwaitingPresent {
            let pixels = capturedForFlip?.pixels ?? compositor.snapshot()
            capturedForFlip = (pixels, (capturedForFlip?.waiting ?? []) + [completion])
        } else {
            capturesAwaitingPresent.append(completion)
        }
    }

    /// Whether the shadow buffer is exactly what is on screen: a frame has flipped, no flip is pending, and
    /// nothing was composed since the last present.
    private var shadowHoldsScreen: Bool {
        counters.framesFlipped > 0 && !backend.isFlipPending && !compositionAwaitingPresent
    }

    /// A frame was just copied for scanout: the shadow buffer holds it, so captures waiting for a present take
    /// their copy now and receive it at its flip.
    private func captureAtPresent() {
        guard !capturesAwaitingPresent.isEmpty else { return }
        capturedForFlip = (compositor.snapshot(), (capturedForFlip?.waiting ?? []) + capturesAwaitingPresent)
        capturesAwaitingPresent = []
    }

    /// Hands captures their frame when it reaches the screen (or, `force`, from the front buffer when no flip is
    /// coming).
    private func deliverCaptures(frontBuffer force: Bool = false) {
        if let (pixels, waiting) = capturedForFlip {
            capturedForFlip = nil
            for completion in waiting { completion(pixels) }
        }
        if force, !capturesAwaitingPresent.isEmpty {
            let pixels = backend.frontBufferSnapshot(), waiting = capturesAwaitingPresent
            capturesAwaitingPresent = []
            for completion in waiting { completion(pixels) }
        }
    }

    /// Whether `subtree` (the layer or a descendant) has a render asked for, in flight, or held by a transaction
    /// group: false means what it shows on the next composition is complete.
    public func isRendering(_ subtree: Layer) -> Bool {
        func inside(_ layer: Layer?) -> Bool {
            guard let layer else { return false }
            return layer === subtree || layer.isDescendant(of: subtree)
        }
        if inFlight.values.contains(where: { inside($0.layer) }) { return true }
        if groups.values.contains(where: { group in group.ready.contains { inside($0.0.layer) } }) { return true }
        var pending = false
        func visit(_ layer: Layer) {
            if layer.needsDisplay && layer.isDrawable { pending = true }
            for child in layer.children where !pending { visit(child) }
        }
        visit(subtree)
        return pending
    }

    /// Renders dispatched whose results have not been received.
    public var rendersInFlight: Int { inFlight.count }

    /// Whether anything is under way: requests, renders, a composition or a flip. False means the engine will do
    /// nothing until the tree changes.
    public var hasPendingWork: Bool {
        !transaction.isEmpty || !inFlight.isEmpty || !synchronousOutputs.isEmpty || needsComposite
            || (compositionAwaitingPresent && presentsEnabled && !presentsHeldByFault) || backend.isFlipPending
            || pendingTick != nil
    }

    /// Asks for a composition at the next commit. Layers call it when a property that moves pixels changes.
    func setNeedsComposite() {
        needsComposite = true
    }

    // MARK: Animations

    /// Identifies an animation added with `addAnimation`.
    public struct AnimationToken: Hashable, Sendable {
        let id: Int
    }

    /// Calls `step` with `target` on every display-link tick (after each flip, in the animations observer) until it
    /// returns false or the target is freed. The target is held weakly (YYWeakProxy): removing a layer from the
    /// tree frees it while its animations are still registered. Pass state through `target` rather than capturing
    /// it in `step`, which is held strongly.
    @discardableResult
    public func addAnimation<Target: AnyObject>(target: Target, _ step: @escaping (Target, DisplayTick) -> Bool) -> AnimationToken {
        let token = AnimationTokenBox()
        let id = displayLink.add(target: target) { [weak self] target, tick in
            guard !step(target, tick), let self, let id = token.id else { return }
            self.displayLink.remove(id)
        }
        token.id = id
        return AnimationToken(id: id)
    }

    public func removeAnimation(_ token: AnimationToken) {
        displayLink.remove(token.id)
    }

    /// Whether some animation target is alive: flips keep coming while it is.
    public var isAnimating: Bool { displayLink.isActive }

    /// The display-link token of an animation, known only after `add` returns. Main thread.
    private final class AnimationTokenBox {
        var id: Int?
    }

    // MARK: Observers

    private func tickAnimations() {
        guard let event = pendingTick else { return }
        pendingTick = nil
        displayLink.flipCompleted(event)
    }

    private func runLayout() {
        for _ in 0..<Self.layoutPassLimit {
            let requested = transaction.takeLayoutRequests()
            guard !requested.isEmpty else { return }
            let ordered = requested.map { (layer: $0, depth: $0.depth) }.sorted { $0.depth < $1.depth }
            for (layer, _) in ordered where layer.host === self && layer.needsLayout {
                layer.needsLayout = false
                layer.layout?(layer)
            }
        }
    }

    private func dispatchRenders() {
        for layer in transaction.takeDisplayRequests() where layer.host === self && layer.needsDisplay {
            if layer.outermostRasterizingAncestor != nil {
                // Its pixels belong to the ancestor's surface, which was asked to render when the layer changed.
                layer.needsDisplay = false
                continue
            }
            // At most one render per layer in flight; the request waits for it (see `receive`), so the render that
            // follows draws the newest data.
            if layer.renderInFlight != nil { continue }
            dispatchRender(for: layer)
        }
    }

    private func dispatchRender(for layer: Layer) {
        layer.willDisplay?(layer)
        // Cleared after `willDisplay`, which may set new content: that content is rendered now, not again later.
        layer.needsDisplay = false
        let size = Size(width: layer.frame.width, height: layer.frame.height)
        let work: RenderWork
        if layer.rasterizesSubtree {
            work = .rasterized(RasterPlan(root: layer))
        } else if let content = layer.content {
            work = .content(content)
        } else {
            return
        }
        guard size.width > 0, size.height > 0 else {
            if layer.renderedSurface != nil {
                layer.renderedSurface = nil
                needsComposite = true
            }
            return
        }
        let capture = layer.sentinel.capture()
        lastRenderID += 1
        let renderID = lastRenderID
        let label = layer.name ?? work.kind
        inFlight[renderID] = RenderRequest(id: renderID, layer: layer, capture: capture, kind: work.kind,
                                           groupID: joinGroup(of: layer, renderID: renderID), label: label)
        layer.renderInFlight = renderID
        counters.rendersStarted += 1
        if layer.displaysAsynchronously {
            let inbox = self.inbox
            pool.submit(RenderJobInfo(label: label, kind: work.kind, priority: layer.drawingPriority)) {
                inbox.deliver(RenderOutput.render(work, size: size, capture: capture, renderID: renderID))
            }
        } else {
            synchronousOutputs.append(RenderOutput.render(work, size: size, capture: capture, renderID: renderID))
        }
    }

    /// Registers a render with the transaction group holding the layer, if any; returns the group's id.
    ///
    /// A group only makes a *newly shown* subtree appear whole: once it has landed, changes inside it are applied
    /// one by one as they finish. And each layer joins with its first render only, so a layer updated again while
    /// the group waits cannot hold the group back; its newer render lands alone (and wins over the held one).
    private func joinGroup(of layer: Layer, renderID: UInt64) -> ObjectIdentifier? {
        guard let groupLayer = layer.outermostHoldingGroup, !groupLayer.groupHasLanded else { return nil }
        let id = ObjectIdentifier(groupLayer)
        let group: TransactionGroupState
        if let existing = groups[id], existing.layer === groupLayer {
            group = existing
        } else {
            group = TransactionGroupState(layer: groupLayer)
            groups[id] = group
        }
        guard group.members.insert(ObjectIdentifier(layer)).inserted else { return nil }
        group.pending.insert(renderID)
        return id
    }

    private func commit() {
        receiveRenders()
        guard state == .running else { return }
        if needsComposite { composeFrame() }
        presentIfPossible(atFlip: false)
        // A callback run by this iteration's observers (`didDisplay`, `willDisplay`) may have asked for more; the
        // loop must not go to sleep on it, since nothing else would wake it.
        if !transaction.isEmpty || needsComposite || !synchronousOutputs.isEmpty { waker.wake() }
    }

    // MARK: Receiving renders

    private func receiveRenders() {
        let outputs = synchronousOutputs + inbox.drain()
        synchronousOutputs.removeAll()
        for output in outputs { receive(output) }
        for (id, group) in groups where group.canRelease {
            groups[id] = nil
            release(group)
        }
    }

    private func receive(_ output: RenderOutput) {
        guard let request = inFlight.removeValue(forKey: output.renderID) else { return }
        counters.rendersCompleted += 1
        if let layer = request.layer, layer.renderInFlight == request.id {
            layer.renderInFlight = nil
            // A request made while this render was in flight is dispatched at the next display observer.
            if layer.needsDisplay, layer.host === self { transaction.requestDisplay(layer) }
        }
        var group = request.groupID.flatMap { groups[$0] }
        if group?.pending.remove(request.id) == nil { group = nil }
        let layer = request.layer
        switch output.result {
        case .failed(let message):
            counters.rendersFailed += 1
            logger.error("layer \(request.label): render failed: \(message)")
            onRenderFailed?(request.label, message)
            if let layer { layer.didDisplay?(layer, false) }
        case .cancelled:
            drop(request)
        case .surface(let surface):
            renderTimes[request.kind, default: LatencyRecorder()].record(output.duration)
            if let group {
                group.ready.append((request, surface))
            } else {
                apply(surface, for: request)
            }
        }
    }

    /// Shows every result the group held, in one frame.
    private func release(_ group: TransactionGroupState) {
        group.layer?.groupHasLanded = true
        for (request, surface) in group.ready { apply(surface, for: request) }
        group.ready.removeAll()
        needsComposite = true
    }

    /// Applies a result unless it can never be shown (its layer is gone, its content removed) or a newer render of
    /// the layer is already shown. A result that newer requests have superseded is still applied: the newest
    /// finished render is what the layer shows.
    private func apply(_ surface: LayerSurface, for request: RenderRequest) {
        guard let layer = request.layer, !request.capture.isCancelled(),
              layer.shownGeneration.map({ request.capture.value >= $0 }) ?? true else {
            drop(request)
            return
        }
        layer.shownGeneration = request.capture.value
        layer.renderedSurface = surface
        needsComposite = true
        layer.didDisplay?(layer, true)
    }

    private func drop(_ request: RenderRequest) {
        counters.staleRendersDropped += 1
        if let layer = request.layer { layer.didDisplay?(layer, false) }
    }

    // MARK: Composing

    private func composeFrame() {
        needsComposite = false
        let entries = LayerFlattener.flatten(rootLayer, screen: screen) { [self] layer in isAwaitingFirstBatch(layer) }
        let frame = FrameDiff.diff(entries, against: lastFrame, forcedDamage: forcedDamage, screen: screen)
        forcedDamage = []
        lastFrame = frame.record
        guard !frame.damage.isEmpty else { return }
        compositor.compose(frame.items, damage: frame.damage)
        counters.framesComposed += 1
        if compositionAwaitingPresent { counters.compositionsReplaced += 1 }
        compositionAwaitingPresent = true
    }

    private func isAwaitingFirstBatch(_ layer: Layer) -> Bool {
        guard layer.holdsChildrenUntilReady, !layer.groupHasLanded, let group = groups[ObjectIdentifier(layer)] else {
            return false
        }
        return group.layer === layer
    }

    // MARK: Presenting

    /// Presents the composition waiting for a buffer, if no flip is pending. Outside a flip callback, also presents
    /// the unchanged frame while something animates, because only flips tick the display link.
    private func presentIfPossible(atFlip: Bool) {
        guard state == .running, presentsEnabled, !presentsHeldByFault, !backend.isFlipPending else { return }
        if compositionAwaitingPresent {
            present(unchanged: false)
        } else if !atFlip, displayLink.isActive {
            present(unchanged: true)
        }
    }

    private func present(unchanged: Bool) {
        guard let buffer = backend.acquireBuffer() else {
            // Every buffer is on screen or queued; the next flip frees one and presents from its callback.
            logger.debug("\(backend.info.connector): no free buffer to present into")
            return
        }
        let copied = compositor.copy(into: buffer)
        do {
            try backend.present(buffer, damage: copied.rects)
        } catch {
            backend.releaseBuffer(buffer)
            // The buffer's contents are unknown from here on; copy it whole next time.
            compositor.invalidateBuffers()
            presentFailed(error)
            return
        }
        armFlipDeadline()
        compositionAwaitingPresent = false
        captureAtPresent()
        counters.framesPresented += 1
        if unchanged { counters.unchangedFramesPresented += 1 }
        bytesCopied.record(copied.bytes)
        if !unchanged { onPresent?(copied.rects) }
    }

    private func flipCompleted(_ event: FlipEvent) {
        disarmFlipDeadline()
        counters.framesFlipped += 1
        fpsCounter.record(event.timestamp)
        pendingTick = event
        onFlip?(event)
        deliverCaptures()
        // The newest composition goes out now, one refresh after the frame before it.
        presentIfPossible(atFlip: true)
    }
}
