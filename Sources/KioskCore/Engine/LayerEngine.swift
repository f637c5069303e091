/// Drives one output: the layer tree, its renders on the pool, composition and presentation, and the display
/// link, from four `MainLoop` observers run each iteration before the loop sleeps (YYAsyncLayer + YYTransaction +
/// CADisplayLink, on DRM):
///
/// 1. animations (`ObserverOrder.animations`): after a flip, the display link ticks its live targets;
/// 2. layout (`.layout`): `layout` hooks of layers that asked, parents first;
/// 3. render (`.render`): a render for each layer that asked, coalesced since the last iteration: `willRender`,
///    sentinel capture, then `content.draw` on the pool into a fresh surface of the layer's size. A layer with a
///    render in flight waits for it: at most one render per layer is in flight and at most one more pending, and
///    the pending one is dispatched when the first is back, so it draws the newest data;
/// 4. commit (`.commit`, the last): finished renders are applied (`didRender`) unless they can never be shown
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
/// arms no timer and causes no wake-up. With a repaint window set (`repaintWindow`, off by default), while the display
/// link has live targets each present waits until shortly before the next vblank (`RepaintWindow.swift`), so renders
/// that land meanwhile still make it.
///
/// Outputs come and go (`LayerEngine+Output.swift`): the engine, its layer tree and everything that drives it live
/// for the whole run, while the output (a backend with its compositor) is attached when a display is adopted and
/// detached on unplug. Without one, renders still land but nothing is composed or presented and no timer is armed;
/// an output of another scene size moves the root to that size and says so to `addSceneSizeListener`'s listeners.
///
/// Output rotation: the tree is laid out in the compositor's `sceneSize` (the mode size turned by its rotation); the
/// compositor alone maps scene coordinates onto the panel.
///
/// Display power: while the output is off (`setOutputPower(false)`) renders and compositions go on as usual, but
/// nothing is presented, so no flips complete and the display link gets no ticks: animations freeze where they
/// are (their clocks are flip timestamps) and resume when the output is lit again.
///
/// Where the work is: dispatching and receiving renders in `LayerEngine+Rendering.swift`; composing, presenting
/// and flips in `LayerEngine+Presenting.swift`; fault policies in `FrameFaults.swift`; screenshots waiting for
/// their frame in `ScreenshotQueue`; who hears flips, presents, faults and failed renders in
/// `LayerEngine+Listeners.swift`.
///
/// Lives on the main thread, with the loop, the backend, the compositor and the layer tree. Render workers see
/// only immutable values: the content, a size, a sentinel capture, and the inbox they deliver to.
public final class LayerEngine {
    public let loop: MainLoop
    /// The output presented on, while one is attached (see `attachOutput`).
    public internal(set) var backend: (any DisplayBackend)?
    /// The output's compositor, sized to its mode; attached and detached with `backend`.
    public internal(set) var compositor: (any Compositing)?
    public let pool: RenderQueuePool
    /// The root of the tree: the size of the scene (the screen, turned by the output rotation), black unless changed.
    public let rootLayer: Layer
    /// Layers waiting for the next layout and display observers.
    public let transaction = Transaction()
    /// Ticks on flip events while it has live targets; `addAnimation` registers with it.
    public let displayLink: DisplayLink
    // The engine's events, heard through `add…Listener` (`LayerEngine+Listeners.swift`).
    let flipListeners = Listeners<FlipEvent>()
    let renderFailedListeners = Listeners<(layer: String, message: String)>()
    let presentListeners = Listeners<[Rect]>()
    let faultListeners = Listeners<FrameFault>()
    let fatalListeners = Listeners<FatalFrameError>()
    let sceneSizeListeners = Listeners<Size>()
    /// Called when the kernel refused every configuration of the attached output's mode size (EINVAL or ENOSPC at
    /// commit, the backend's fallbacks exhausted). Returns true when the caller opens the output again in another
    /// mode (`OutputManager` does, in the connector's preferred mode); presents are held until that output is
    /// attached. Unset or false: the fault is fatal. A question with one answer, so one answerer: a slot, not a
    /// listener list.
    public var onFallbackExhausted: ((PresentFailure) -> Bool)?

    enum RunState { case created, running, stopped }

    // State shared with the extensions: rendering (`LayerEngine+Rendering.swift`), composing and presenting
    // (`LayerEngine+Presenting.swift`) and faults (`FrameFaults.swift`).
    var state = RunState.created
    /// The root's bounds: the scene size of the output attached last.
    var screen: Rect
    private var observers: [ObserverHandle] = []
    let inbox: RenderInbox
    let waker: Waker
    var synchronousOutputs: [RenderOutput] = []
    /// Long renders held back while a short one is in flight (`defersLongRender`), with when.
    var deferredLongRenders: [(layer: Layer, since: MonotonicInstant)] = []
    /// Renders dispatched in the current pass, submitted to the pool together at its end.
    var dispatchedJobs: [(info: RenderJobInfo, work: @Sendable () -> Void)] = []
    var inFlight: [UInt64: RenderRequest] = [:]
    var groups: [ObjectIdentifier: TransactionGroupState] = [:]
    var lastRenderID: UInt64 = 0
    var needsComposite = true
    var forcedDamage: [Rect] = []
    var lastFrame = FrameDiff.Record()
    /// A composition is in the shadow buffer that no scanout buffer has received yet.
    var compositionAwaitingPresent = false
    /// `setNeedsPresent`: the next commit presents even an unchanged frame.
    var presentRequested = false
    /// The flip the animations observer has not ticked the display link for yet.
    var pendingTick: FlipEvent?
    /// The time of the last completed flip: the output's vblank grid (`expectedVblank(forChangeAt:)`).
    var lastFlipTime: MonotonicInstant?
    /// False from `setOutputPower(false)` until the output is lit again: nothing is presented meanwhile.
    var presentsEnabled = true
    /// Flips completed on the output attached now (`counters.framesFlipped` counts every output's).
    var framesFlippedOnOutput = 0
    var counters = EngineStats()
    /// Present and flip faults: holds, retry and regain timers, the flip deadline (see `FrameFaults.swift`).
    var faults = FrameFaultState()
    /// The repaint window while something animates: the last vblank and the timer of a deferred present.
    var repaint = RepaintSchedule()
    var renderTimes: [String: LatencyRecorder] = [:]
    /// Where renders read the time they take, which orders the render pool's queue (`RenderJobInfo.isLong`); a
    /// test sets a manual one.
    public var renderClock = RenderClock.monotonic
    var bytesCopied = ByteCountRecorder()
    var fpsCounter = FPSCounter()
    /// `captureScreen` requests waiting for their frame.
    let screenshots = ScreenshotQueue()
    /// `captureScreen(atVblankNearest:)` requests waiting for their vblank.
    let timedScreenshots = TimedScreenshots()
    /// The timers that seed timed screenshots as their window opens, by request.
    var seedTimers: [Int: TimerHandle] = [:]
    /// Purgeable subtrees and the surface budget (`SurfaceBudget.swift`).
    let surfaces = SurfaceBookkeeping()
    /// Surfaces shown by `showExternalSurface` that no present has carried yet, by layer.
    var externalFrames: [ObjectIdentifier: ExternalFrame] = [:]
    /// The output's overlay planes, nil where there are none (headless, legacy commits): see `LayerEngine+Planes.swift`.
    public var overlayPlanes: (any OverlayPlanes)? {
        didSet { if overlayPlanes !== oldValue { planeLayout = []; setNeedsComposite() } }
    }
    /// The layers on planes at the last composition, with the surface each plane shows.
    var planeLayout: [PlanePlacement] = []
    /// The path of each plane-eligible layer at the last composition, for `stats`.
    var layerPaths: [LayerPathReport] = []
    /// Black and frozen screens (`LayerEngine+ScreenWatch.swift`): the watch, the newest composition's fingerprint
    /// and the presented one's (the screen's at its flip), the problem last reported, and the timer that declares
    /// a black screen once it has lasted.
    var screenWatch = ScreenWatch()
    /// Whether the newest composition showed content the scene drew; nil before the first one. Its fingerprint is
    /// read from the compositor at the present, once the frame has been written (a frame written straight into the
    /// scanout buffer is hashed as it is written).
    var composedHasVisibleContent: Bool?
    var presentedFrame: ShownFrame?
    var reportedScreenProblem: ScreenHealthSettings.Problem?
    var blackCheck: TimerHandle?

    /// Layout hooks may ask for more layout; this many passes run in one observer before the rest waits for the
    /// next iteration, so a hook that always asks again cannot hang the loop.
    static let layoutPassLimit = 4

    /// An engine presenting on `backend` from the start.
    /// - Throws: `OutputError` when the compositor's size is not the output's mode size.
    public convenience init(loop: MainLoop, backend: any DisplayBackend, compositor: any Compositing, pool: RenderQueuePool = RenderQueuePool()) throws {
        try Self.checkSizes(backend: backend, compositor: compositor)
        try self.init(loop: loop, sceneSize: compositor.sceneSize, frameDuration: backend.info.mode.frameDuration, pool: pool)
        self.backend = backend
        self.compositor = compositor
    }

    /// An engine with no output yet: the tree is laid out in `sceneSize` until `attachOutput` brings a display.
    public init(loop: MainLoop, sceneSize: Size, frameDuration: Duration = .milliseconds(16), pool: RenderQueuePool = RenderQueuePool()) throws {
        self.loop = loop
        self.pool = pool
        screen = Rect(size: sceneSize)
        displayLink = DisplayLink(frameDuration: frameDuration)
        // The waker only has to end the loop's sleep: the commit observer of the next iteration drains the inbox.
        waker = try loop.makeWaker {}
        inbox = RenderInbox(waker: waker)
        rootLayer = Layer(frame: screen, name: "root")
        rootLayer.backgroundColor = .black
        rootLayer.attach(to: self)

        observers = [
            loop.addObserver(order: ObserverOrder.animations, activities: .beforeWaiting) { [weak self] _ in self?.tickAnimations() },
            loop.addObserver(order: ObserverOrder.layout, activities: .beforeWaiting) { [weak self] _ in self?.runLayout() },
            loop.addObserver(order: ObserverOrder.render, activities: .beforeWaiting) { [weak self] _ in self?.dispatchRenders() },
            loop.addObserver(order: ObserverOrder.commit, activities: .beforeWaiting) { [weak self] _ in self?.commit() },
        ]
    }

    static func checkSizes(backend: any DisplayBackend, compositor: any Compositing) throws {
        guard compositor.size == backend.info.mode.size else {
            throw OutputError("\(backend.info.connector): compositor is \(compositor.size), the mode is \(backend.info.mode.size)")
        }
    }

    deinit {
        for observer in observers { observer.cancel() }
    }

    // MARK: Lifecycle

    /// Starts the backend, if an output is attached (modeset, first black buffer); the next commit composes and
    /// presents the whole screen. Without an output the engine runs and waits for `attachOutput`.
    public func start() throws {
        precondition(state == .created, "LayerEngine.start: called twice")
        if let backend { try startBackend(backend) }
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
        repaint.cancel()
        blackCheck?.cancel()
        blackCheck = nil
        backend?.stop()
        for request in inFlight.values where request.layer?.renderInFlight == request.id { request.layer?.renderInFlight = nil }
        // Screenshots still waiting get the last frame shown, as the front buffer holds it.
        screenshots.frameFlipped(frontBuffer: { [backend] in backend?.frontBufferSnapshot() })
        timedScreenshots.cancelAll()
        for timer in seedTimers.values { timer.cancel() }
        seedTimers = [:]
        inFlight.removeAll()
        deferredLongRenders.removeAll()
        groups.removeAll()
        synchronousOutputs.removeAll()
        _ = inbox.drain()
        externalFramesDiscarded()
    }

    /// Recomposes and copies the whole screen at the next commit: after a modeset or when the scanout buffers were
    /// reallocated. The vblank timeline starts afresh with the next flip.
    public func redrawEverything() {
        repaint.reset()
        compositor?.invalidateBuffers()
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
        stats.repaintWindowMs = Double(repaintLead.nanosecondsClamped) / 1e6
        stats.repaintWindowMisses = repaint.misses
        stats.repaintWindowNearMisses = repaint.nearMisses
        let health = self.health
        stats.healthy = health.isHealthy
        stats.healthReason = health.reason
        stats.fingerprint = screenFingerprint?.hex
        stats.tilesHashed = tilesHashed
        stats.expectedChangesMissed = screenWatch.missedChanges
        stats.surfaces = surfaceStatistics
        stats.pageReadyMs = surfaces.pageReady.summary
        stats.layerPaths = layerPaths
        return stats
    }

    /// Whether the output is lit (see `setOutputPower`); false with no output.
    public var isOutputPoweredOn: Bool { backend?.isPoweredOn ?? false }

    /// Blanks (`false`) or lights (`true`) the output; setting the state it is already in does nothing.
    ///
    /// Off: a pending flip completes first (the backend waits for it), then the output goes dark. Layers keep
    /// rendering and the shadow buffer keeps being composed, but nothing is presented, no frame counts as
    /// presented, and the display link gets no ticks, so animations freeze. On: the whole screen is recomposed and
    /// the newest composition is presented as a full copy at the next commit; flips and ticks resume with it.
    ///
    /// - Throws: `OutputError` from the backend (naming the connector and errno); the power state is then
    ///   unchanged. `NoOutputError` with no output attached.
    public func setOutputPower(_ on: Bool) throws {
        guard let backend else { throw NoOutputError() }
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
            screenshots.frameFlipped(frontBuffer: { [backend] in backend.frontBufferSnapshot() })
            forgetScreen()
        }
    }

    /// The frame on screen now, copied from the compositor's shadow buffer (cached RAM, never the write-combined
    /// scanout buffer): XRGB8888 rows of `backend.info.mode.size` (panel coordinates, whatever the rotation),
    /// stride = width * 4. Nil when the shadow buffer does not hold that frame at this moment (nothing flipped
    /// yet, a flip pending, or a newer composition waiting); `captureScreen(then:)` waits for the moment instead.
    public func screenshot() -> [UInt8]? {
        shadowHoldsScreen ? compositor.map(screenSnapshot) : nil
    }

    /// Calls `completion` on the main thread with the frame on screen (as `screenshot()`). When the shadow buffer
    /// holds that frame, it is copied at once. Otherwise the copy is taken when the shadow buffer holds the frame
    /// being presented (at once when the pending flip's frame is still the newest composition, else at the next
    /// present) and handed over when that frame's flip completes, so a scene that changes every frame cannot
    /// starve a capture; before the first flip, that is the first frame. Nil when the engine is not running.
    /// While the output is off no flip is coming: the frame is read from the backend's front buffer instead.
    public func captureScreen(then completion: @escaping ([UInt8]?) -> Void) {
        guard state == .running, let backend, let compositor else {
            completion(nil)
            return
        }
        if shadowHoldsScreen {
            completion(screenSnapshot(compositor))
        } else if !presentsEnabled {
            completion(backend.frontBufferSnapshot())
        } else if backend.isFlipPending, !compositionAwaitingPresent {
            screenshots.waitForPendingFlip(completion, shadow: { self.screenSnapshot(compositor) })
        } else {
            screenshots.waitForNextPresent(completion)
        }
    }

    /// Calls `completion` on the main thread with the frame on screen at the vblank nearest `instant` (on
    /// CLOCK_MONOTONIC, the clock of vblank timestamps) and the time of the flip that put it on screen (nil when no
    /// flip came from three periods before `instant`, and the frame then on screen is given): waits until the first flip more than half a refresh period after it, or
    /// for `instant` plus `patience` when none comes. The frames are copied from the shadow buffer at their presents,
    /// from three periods before `instant` (8 MB a copy at 1080p, only for those few frames). Nil pixels when the
    /// engine is not running.
    public func captureScreen(atVblankNearest instant: MonotonicInstant, patience: Duration = .milliseconds(250),
                              then completion: @escaping (_ pixels: [UInt8]?, _ vblank: MonotonicInstant?) -> Void) {
        guard state == .running, backend != nil else { return completion(nil, nil) }
        let period = displayLink.frameDuration
        timedScreenshots.add(at: instant, completion: completion) { id in
            // The frame on screen as the window opens, for a screen that does not flip again before the time.
            let open = instant + period * -3
            let seed = { [weak self] in
                guard let self else { return }
                seedTimers[id] = nil
                timedScreenshots.seed(id, pixels: screenshot())
            }
            if open <= loop.now { seed() } else { seedTimers[id] = loop.addTimer(at: open, seed) }
            return loop.addTimer(at: instant + period / 2 + patience) { [weak self] in
                guard let self else { return }
                seedTimers[id]?.cancel()
                seedTimers[id] = nil
                timedScreenshots.expire(id) { self.screenshot() ?? self.backend?.frontBufferSnapshot() }
            }
        }
    }

    /// Whether the shadow buffer is exactly what is on screen: a frame has flipped, no flip is pending, and
    /// nothing was composed since the last present.
    private var shadowHoldsScreen: Bool {
        framesFlippedOnOutput > 0 && backend?.isFlipPending == false && !compositionAwaitingPresent
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
            // A purged subtree renders nothing until it is restored.
            if layer.surfacesPurged { return }
            if layer.needsRender && layer.isDrawable { pending = true }
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
        !transaction.isEmpty || !inFlight.isEmpty || !synchronousOutputs.isEmpty || (needsComposite && backend != nil)
            || ((compositionAwaitingPresent || presentRequested) && presentsEnabled && !presentsHeldByFault && backend != nil)
            || backend?.isFlipPending == true || pendingTick != nil || repaint.timer != nil
    }

    /// Presents at the next commit even when nothing in the tree changed, for state that rides on the output's
    /// commits rather than in the frame (a cursor plane's position). With a flip in flight it goes out after it.
    public func setNeedsPresent() {
        presentRequested = true
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

    private func commit() {
        receiveRenders()
        enforceSurfaceBudget()
        // Without an output nothing is composed; a composition waits for the next one (`attachOutput`).
        guard state == .running, backend != nil else { return }
        // While a present waits for its repaint window, what changed is composed when the window opens, with
        // everything else that lands until then: the lead then covers composing, copying and committing, as a
        // compositor's repaint window does, and work done just before the window cannot make its present late.
        let composeDeferred = needsComposite && composeWaitsForRepaintWindow()
        let workStart = repaint.mode == .off ? nil : loop.now
        let composedBefore = counters.framesComposed, presentedBefore = counters.framesPresented
        if needsComposite && !composeDeferred { composeFrame() }
        presentIfPossible(atFlip: false)
        if let workStart, counters.framesComposed != composedBefore || counters.framesPresented != presentedBefore {
            repaintWorkDone(loop.now - workStart)
        }
        // A callback run by this iteration's observers (`didRender`, `willRender`) may have asked for more; the
        // loop must not go to sleep on it, since nothing else would wake it. A deferred composition has the
        // window's timer to wake it.
        if !transaction.isEmpty || (needsComposite && !composeDeferred) || !synchronousOutputs.isEmpty { waker.wake() }
    }
}
