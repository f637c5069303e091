import Logging

private let logger = Logger(label: "kioskd.engine")

/// Drives one output: the layer tree, its renders on the pool, composition and presentation, and the display
/// link, from four `MainLoop` observers run each iteration before the loop sleeps (YYAsyncLayer + YYTransaction +
/// CADisplayLink, on DRM):
///
/// 1. animations (`ObserverOrder.animations`): after a flip, the display link ticks its live targets;
/// 2. layout (`.layout`): `layout` hooks of layers that asked, parents first;
/// 3. display (`.display`): a render for each layer that asked, coalesced since the last iteration: `willDisplay`,
///    sentinel capture, then `content.draw` on the pool into a fresh surface of the layer's size;
/// 4. commit (`.commit`, the last): finished renders whose sentinel still matches are applied (`didDisplay`),
///    held back while their transaction group waits; the tree is flattened into `CompositeItem`s, diffed with the
///    previous frame into damage, and composed; if no flip is pending, the damage is copied into a free buffer and
///    presented.
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

    private enum RunState { case created, running, stopped }

    /// One layer's item in the last composed frame, to diff the next against.
    private struct CompositedLayer {
        let index: Int
        let item: CompositeItem
        let visible: Rect
    }

    private struct BuiltItem {
        let id: ObjectIdentifier
        let item: CompositeItem
        let visible: Rect
    }

    private var state = RunState.created
    private let screen: Rect
    private var observers: [ObserverHandle] = []
    private let inbox: RenderInbox
    private let waker: Waker
    private var synchronousOutputs: [RenderOutput] = []
    private var inFlight: [UInt64: RenderRequest] = [:]
    private var groups: [ObjectIdentifier: TransactionGroupState] = [:]
    private var lastRenderID: UInt64 = 0
    private var needsComposite = true
    private var forcedDamage: [Rect] = []
    private var lastFrame: [ObjectIdentifier: CompositedLayer] = [:]
    /// A composition is in the shadow buffer that no scanout buffer has received yet.
    private var compositionAwaitingPresent = false
    /// The flip the animations observer has not ticked the display link for yet.
    private var pendingTick: FlipEvent?
    /// False from `setDisplayPower(false)` until the output is lit again: nothing is presented meanwhile.
    private var presentsEnabled = true
    private var counters = EngineStats()
    private var renderTimes: [String: LatencyRecorder] = [:]
    private var bytesCopied = ByteCountRecorder()
    private var fpsCounter = FPSCounter()

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
        backend.stop()
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
        }
    }

    /// The frame the last completed flip put on screen, read back from the scanout buffer (not a re-render):
    /// XRGB8888 rows of `backend.info.mode.size` (panel coordinates, whatever the rotation), stride = width * 4.
    public func screenshot() -> [UInt8]? { backend.frontBufferSnapshot() }

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
            || (compositionAwaitingPresent && presentsEnabled) || backend.isFlipPending || pendingTick != nil
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
    private func joinGroup(of layer: Layer, renderID: UInt64) -> ObjectIdentifier? {
        guard let groupLayer = layer.outermostHoldingGroup else { return nil }
        let id = ObjectIdentifier(groupLayer)
        let group: TransactionGroupState
        if let existing = groups[id], existing.layer === groupLayer {
            group = existing
        } else {
            group = TransactionGroupState(layer: groupLayer)
            groups[id] = group
        }
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

    /// Applies a result unless its layer is gone or asked for something newer since.
    private func apply(_ surface: LayerSurface, for request: RenderRequest) {
        guard let layer = request.layer, !request.capture.isCancelled() else {
            drop(request)
            return
        }
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
        var built: [BuiltItem] = []
        collectItems(rootLayer, mapping: .identity, opacity: 1, clip: nil, into: &built)

        var damage = DamageRegion(bounds: screen)
        for rect in forcedDamage { damage.add(rect) }
        forcedDamage = []
        var frame: [ObjectIdentifier: CompositedLayer] = [:]
        frame.reserveCapacity(built.count)
        // Whatever changed is damaged where it was and where it is. An item that kept its place but now comes
        // before one it used to follow changed order: damaging it covers their overlap.
        var latestPreviousIndex = -1
        for (index, entry) in built.enumerated() {
            if let previous = lastFrame[entry.id] {
                if !Self.looksTheSame(previous.item, entry.item) {
                    damage.add(previous.visible)
                    damage.add(entry.visible)
                } else if previous.index < latestPreviousIndex {
                    damage.add(entry.visible)
                }
                latestPreviousIndex = max(latestPreviousIndex, previous.index)
            } else {
                damage.add(entry.visible)
            }
            frame[entry.id] = CompositedLayer(index: index, item: entry.item, visible: entry.visible)
        }
        for (id, previous) in lastFrame where frame[id] == nil {
            damage.add(previous.visible)
        }
        lastFrame = frame

        guard !damage.isEmpty else { return }
        compositor.compose(built.map(\.item), damage: damage.rects)
        counters.framesComposed += 1
        if compositionAwaitingPresent { counters.compositionsReplaced += 1 }
        compositionAwaitingPresent = true
    }

    /// Back to front: a layer, then its children by `zPosition` and insertion order, through the ancestors'
    /// frames, transforms, opacity and clipping. Hidden subtrees, subtrees clipped away entirely, and groups that
    /// have not shown a complete batch yet, are left out; a rasterized subtree is its root's item alone.
    ///
    /// `clip` is the intersection of the clipping ancestors' frames on the screen (for a rotated clipping layer,
    /// its bounding box), nil when no ancestor clips.
    private func collectItems(_ layer: Layer, mapping parent: ScreenMapping, opacity parentOpacity: Double, clip: Rect?,
                              into items: inout [BuiltItem]) {
        guard !layer.isHidden, !isAwaitingFirstBatch(layer) else { return }
        let opacity = parentOpacity * layer.opacity
        guard opacity > 0 else { return }
        let mapping = parent.appending(layer)
        let size = Size(width: layer.frame.width, height: layer.frame.height)
        let frame = mapping.rect(covering: size)
        if !frame.isEmpty, let source = compositeSource(of: layer) {
            // A clip that cuts nothing is left off, so a clipping ancestor that moves around a child it fully shows
            // does not make the child look changed.
            let itemClip = clip.flatMap { Self.enclosing($0, frame) ? nil : $0 }
            let item = CompositeItem(source: source, frame: frame, opacity: opacity, clip: itemClip,
                                     transform: mapping.isUpright ? nil : mapping.unitSquareTransform(for: size))
            items.append(BuiltItem(id: ObjectIdentifier(layer), item: item, visible: item.visibleFrame.intersection(screen)))
        }
        guard !layer.rasterizesSubtree else { return }
        var childClip = clip
        if layer.clipsToBounds {
            childClip = clip.map { $0.intersection(frame) } ?? frame
        }
        if let childClip, childClip.isEmpty { return }
        for child in layer.childrenInDrawingOrder {
            collectItems(child, mapping: mapping, opacity: opacity, clip: childClip, into: &items)
        }
    }

    private static func enclosing(_ outer: Rect, _ inner: Rect) -> Bool {
        inner.x >= outer.x && inner.y >= outer.y && inner.maxX <= outer.maxX && inner.maxY <= outer.maxY
    }

    private func compositeSource(of layer: Layer) -> CompositeItem.Source? {
        let color: Color?
        if layer.isDrawable {
            if let surface = layer.renderedSurface { return .surface(surface) }
            color = layer.placeholderColor
        } else {
            color = layer.backgroundColor
        }
        guard let color, color.alpha > 0 else { return nil }
        return .color(color)
    }

    func isAwaitingFirstBatch(_ layer: Layer) -> Bool {
        guard layer.holdsChildrenUntilReady, !layer.groupHasLanded, let group = groups[ObjectIdentifier(layer)] else {
            return false
        }
        return group.layer === layer
    }

    /// Whether two items put the same pixels in the same place.
    private static func looksTheSame(_ a: CompositeItem, _ b: CompositeItem) -> Bool {
        guard a.frame == b.frame, a.opacity == b.opacity, a.clip == b.clip, a.transform == b.transform else { return false }
        switch (a.source, b.source) {
        case (.surface(let x), .surface(let y)): return x === y
        case (.color(let x), .color(let y)): return x == y
        default: return false
        }
    }

    // MARK: Presenting

    /// Presents the composition waiting for a buffer, if no flip is pending. Outside a flip callback, also presents
    /// the unchanged frame while something animates, because only flips tick the display link.
    private func presentIfPossible(atFlip: Bool) {
        guard state == .running, presentsEnabled, !backend.isFlipPending else { return }
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
            logger.error("\(backend.info.connector): present failed: \(error)")
            // The buffer's contents are unknown from here on; copy it whole next time.
            compositor.invalidateBuffers()
            return
        }
        compositionAwaitingPresent = false
        counters.framesPresented += 1
        if unchanged { counters.unchangedFramesPresented += 1 }
        bytesCopied.record(copied.bytes)
        if !unchanged { onPresent?(copied.rects) }
    }

    private func flipCompleted(_ event: FlipEvent) {
        counters.framesFlipped += 1
        fpsCounter.record(event.timestamp)
        pendingTick = event
        onFlip?(event)
        // The newest composition goes out now, one refresh after the frame before it.
        presentIfPossible(atFlip: true)
    }
}
