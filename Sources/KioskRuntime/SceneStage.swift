import Foundation
import Glibc
import KioskCore
import KioskRender
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.scene")

/// The running scene's controller: a validated `Scene` as a layer tree on a `LayerEngine`, loaded and reloaded,
/// kept up to date with data, page changes and `widget.set`. What the control socket drives (`SceneControlling`).
/// `SceneBuilder` turns widgets into layers and content; `SceneMotion` moves what moves by itself.
///
/// Loading: a scene file is read, validated and laid out (text measured) on a background queue; only the layers
/// are made on the main thread, so a large scene does not hold up a flip. Loads finish in the order asked.
///
/// Tree: the engine's root holds one stage root per scene, sized to the scene (the display's scene size, or the
/// scene's fixed size scaled to fit and centred). The stage root is a transaction group: after a load nothing of
/// the new scene is shown until every widget of it has rendered, and then it replaces the previous scene in one
/// frame. Once shown, a data update's widgets land one by one as each finishes rendering, so a slow widget never
/// holds back the others (a clock beside it keeps ticking). Under it, one layer per page,
/// hidden except the current one (hidden layers still render, so a page change shows a complete page), and
/// under each page one layer per widget (see `WidgetNode`).
///
/// Lives on the main thread with the engine; nothing here is touched from render workers or the load queue.
public final class SceneStage: SceneControlling {
    public let engine: LayerEngine
    /// Runs `animate` requests, on the engine's display link.
    public let animator: Animator
    public private(set) var scene: Scene
    /// The scene file, or `"inline"` for a scene given as text.
    public private(set) var source: String
    public private(set) var currentPage: String
    /// The stage's events, heard through `addEventListener` and `addPageSettledListener`.
    let eventListeners = Listeners<StageEvent>()
    private let pageSettledListeners = Listeners<String>()
    /// The engine's events the stage follows: failed renders and another scene size.
    private var engineListeners: [ListenerToken] = []
    /// Whether the scene on screen has appeared (its first complete render landed). A page change completed before
    /// then (a timed one while the first render is slow, or `page.show` at start) is reported once it has.
    private var sceneAppeared = false
    private var settledBeforeAppearing: String?
    /// Applied to every scene loaded after this stage was made (reloads, `scene.load`): `--fps-overlay` adds its
    /// `fps` widget here so the overlay survives a reload.
    public var adjustLoadedScene: @Sendable (Scene) -> Scene = { $0 }
    /// Placeholder shown for a bound key with no value yet.
    public static let placeholder = SceneBuilder.placeholder
    /// How long after a second boundary of the wall clock clocks tick: by then a precise read surely gives the new
    /// second (`WallClock.now`).
    public static let clockTickMargin = Duration.milliseconds(2)
    /// What scenes loaded from now on are validated against (`memory.max_image_pixels` among them); images are
    /// also refused at render time beyond its pixel limit.
    public let limits: SceneLimits
    /// How much the data store takes (`setData`), from every source.
    public var dataLimits = DataLimits()

    let builder: SceneBuilder
    private let motion: SceneMotion
    private(set) var root: Layer
    private var pageLayers: [String: Layer] = [:]
    private(set) var nodes: [WidgetNode] = []
    private var byID: [String: WidgetNode] = [:]
    /// The widget with the id, for tests.
    func node(id: String) -> WidgetNode? { byID[id] }
    private var byKey: [String: [WidgetNode]] = [:]
    /// A loaded scene waiting for its first complete render before it replaces `root`.
    private(set) var incoming: BuiltScene?
    /// The layer of the scene's background picture, if it has one.
    private(set) var backgroundLayer: Layer?
    private var pageTimer: TimerHandle?
    /// Animations given a start (`animate`'s `at`) that are not due yet, by widget and property.
    private var pendingAnimations: [String: TimerHandle] = [:]
    /// The schedule's timer: the next change of the pages its rules allow (`SceneStage+Schedule.swift`).
    var scheduleTimer: TimerHandle?
    /// A change of the pages allowed came during a transition: it is applied once the transition ends.
    var scheduleChangePending = false
    /// Whether the wall clock is synchronized (NTP); until it is, the schedule follows the scene's
    /// `unsynchronized:`. Setting it applies the schedule at once.
    public var clockSynchronized = true {
        didSet {
            guard clockSynchronized != oldValue else { return }
            applySchedule(now: true)
            videos.clockChanged()
        }
    }
    /// When `pageTimer` fires.
    private var pageTimerDue: MonotonicInstant?
    /// The display-link target that makes a group turn in the tick whose vblank is nearest the turn's group time
    /// (`watchTurn`), from a few frames before it.
    private var turnWatch: LayerEngine.AnimationToken?
    /// The group time of the turn `turnWatch` is making, while it makes it.
    private var turnBeingMade: Int64?
    /// Whether this stage has shown the group loop's page once: the first catch-up is a cut, later turns use the
    /// page's transition, as every member does at the same moment.
    private var joinedGroupLoop = false
    /// The group turn made last, until the flip that shows it: its group time, and whether its frame was presented.
    private var groupTurn: (due: Int64, presented: Bool)?
    /// The group time of the turn whose timer fired, until its page is shown.
    private var pendingGroupTurn: Int64?
    /// The last group turns' phase errors (ns): the group time of the flip that showed each, minus the turn's.
    public private(set) var turnPhaseErrors: [Int64] = []
    /// The last 16 group turns: each turn's group time and its phase error (ns), so members can be compared turn
    /// by turn.
    public private(set) var recentTurns: [(due: Int64, error: Int64)] = []
    private var watcher: SceneFileWatcher?
    private var transition: PageTransition?
    /// Where scene files are parsed and laid out; made with the first load.
    var loadQueue: BackgroundJobs?
    /// Where `widget.set` checks image files: apart from `loadQueue`, so a scene being read does not hold it up.
    private var fileCheckQueue: BackgroundJobs?
    /// Which pages keep rendered surfaces (`PageRanges.swift`).
    private let ranges: PageRangeKeeper
    /// `memory.preload_pages`: the pages after the current one in a timed loop that keep rendered surfaces.
    public var preloadPages: Int {
        get { ranges.preload }
        set { ranges.preload = max(0, newValue); updateRanges() }
    }
    /// The video widgets' playback (`SceneStage+Video.swift`).
    let videos: SceneVideos
    let webs: SceneWebs
    /// This panel's place in a video wall, or nil for a scene shown whole. Fixed for the stage's life; its pixels
    /// follow the panel's size (`WallSettings.placement(panel:)`) at every layout.
    public let wall: WallSettings?

    /// Shows `scene` on `engine` (its first page), laid out on the calling thread. `clock` gives the wall-clock
    /// time clocks show (tests pass a fixed one, or one they step); `localZone` tells clocks in the local time zone
    /// that it changed (tests pass a fake). With a `wall`, the scene is laid out on the wall's whole canvas and the
    /// engine shows this panel's part of it.
    public init(engine: LayerEngine, scene: Scene, source: String, limits: SceneLimits = SceneLimits(),
                clock: @escaping () -> WallTime = WallClock.now, localZone: LocalTimeZoneSource = .system,
                wall: WallSettings? = nil) {
        self.engine = engine
        self.limits = limits
        // The budget answers for the decoded images the scene's pages leave in the cache.
        if !engine.sharedSurfaceCaches.contains(where: { $0 === ImageContent.sharedSurfaceCache }) {
            engine.sharedSurfaceCaches.append(ImageContent.sharedSurfaceCache)
        }
        animator = Animator(engine: engine)
        builder = SceneBuilder(engine: engine, values: scene.data, clock: clock)
        builder.maxImagePixels = limits.maximumImagePixels
        motion = SceneMotion(engine: engine, builder: builder, localZone: localZone)
        ranges = PageRangeKeeper(engine: engine, preload: 1)
        videos = SceneVideos(engine: engine, schemes: limits.videoSchemes)
        webs = SceneWebs(engine: engine)
        videos.clock = VideoSlot.SlotClock(now: { Self.date(clock()) }, synchronized: { true })
        self.scene = scene
        self.source = source
        currentPage = scene.pages.first?.name ?? ""
        if let first = scene.pageSchedule().firstPage(at: Self.date(clock())) { currentPage = first }
        root = Layer(name: "scene")
        self.wall = wall
        let screen = engine.rootLayer.frame.size
        let prepared = SceneBuilder.prepare(scene, source: source, screen: screen, wall: wall?.placement(panel: screen),
                                            values: builder.values, time: builder.now())
        let built = builder.build(prepared, currentPage: currentPage)
        adopt(built)
        built.root.didRender = { [weak self] layer, finished in
            guard finished, let self, layer === self.root, !self.sceneAppeared else { return }
            layer.didRender = nil
            self.sceneAppeared = true
            if let page = self.settledBeforeAppearing {
                self.settledBeforeAppearing = nil
                self.pageSettledListeners.emit(page)
            }
        }
        engine.rootLayer.addChild(built.root)
        schedulePageAdvance()
        armScheduleTimer()
        engineListeners = [
            engine.addRenderFailedListener { [weak self] layer, message in
                self?.eventListeners.emit(.error(code: "render_failed", message: "widget \(layer): \(message)"))
            },
            engine.addSceneSizeListener { [weak self] size in self?.relayout(for: size) },
            // A group turn's phase error: the group time of the flip that shows it, against the turn's.
            engine.addPresentListener { [weak self] _ in
                guard let self, let turn = self.groupTurn, !turn.presented else { return }
                self.groupTurn?.presented = true
            },
            engine.addFlipListener { [weak self] flip in
                guard let self, let turn = self.groupTurn, turn.presented else { return }
                self.groupTurn = nil
                guard let shown = self.timeline?.groupTime(at: flip.timestamp) else { return }
                self.turnPhaseErrors.append(shown - turn.due)
                if self.turnPhaseErrors.count > 128 { self.turnPhaseErrors.removeFirst() }
                self.recentTurns.append((turn.due, shown - turn.due))
                if self.recentTurns.count > 16 { self.recentTurns.removeFirst() }
            },
        ]
        videos.onReport = { [weak self] report in self?.eventListeners.emit(.video(report)) }
        webs.onReport = { [weak self] report in self?.eventListeners.emit(.web(report)) }
        webs.onError = { [weak self] message in self?.eventListeners.emit(.error(code: "web", message: message)) }
        webs.dataSource = { [weak self] in self?.builder.values ?? [:] }
        videos.onPageVideoFinished = { [weak self] page in self?.advance(from: page) }
        videos.groupTiming = { [weak self] page in self?.groupVideoTiming(page: page) }
        videos.clock.synchronized = { [weak self] in self?.clockSynchronized ?? true }
    }

    /// Loads and shows the scene file at `path` on the calling thread (at start, before the loop runs); throws
    /// the validation errors (`SceneValidationError`).
    public convenience init(engine: LayerEngine, path: String, limits: SceneLimits = SceneLimits(),
                            clock: @escaping () -> WallTime = WallClock.now, localZone: LocalTimeZoneSource = .system) throws {
        let loaded = try SceneLoader.load(path: path, limits: limits)
        for warning in loaded.warnings { logger.warning("\(warning)") }
        self.init(engine: engine, scene: loaded.scene, source: path, limits: limits, clock: clock, localZone: localZone)
    }

    deinit {
        pageTimer?.cancel()
        scheduleTimer?.cancel()
        watcher?.cancel()
    }

    // MARK: Listeners

    /// `listener` hears every `StageEvent` on the main thread (see `SceneControlling`).
    public func addEventListener(_ listener: @escaping (StageEvent) -> Void) -> ListenerToken {
        eventListeners.add(listener)
    }

    /// `listener` hears a page's name once a change to it has completed: its transition has ended (or it was shown
    /// at once), so the next composition shows it alone and whole. `--capture-pages` captures that frame. A change
    /// completed before the scene first appeared is heard once it has. Main thread.
    public func addPageSettledListener(_ listener: @escaping (_ page: String) -> Void) -> ListenerToken {
        pageSettledListeners.add(listener)
    }

    // MARK: Live reload

    /// Reloads the scene file whenever it changes on disk (inotify on its folder). A valid new version replaces
    /// the scene at a frame boundary, complete; an invalid one is logged, reported as an `error` event, and the
    /// current scene stays on screen.
    public func watch(path: String) throws {
        watcher?.cancel()
        watcher = try SceneFileWatcher(path: path, loop: engine.loop) { [weak self] in
            self?.reload(path: path)
        }
    }

    /// Reloads the scene file (SIGHUP, or the watcher), off the loop like `scene.load`. `completion`, on the main
    /// thread, says whether the new scene was accepted; a rejected one is logged and sent as an `error` event.
    public func reload(path: String, then completion: ((Bool) -> Void)? = nil) {
        loadScene(path: path) { [weak self] result in
            switch result {
            case .success:
                logger.notice("scene \(path) reloaded")
                completion?(true)
            case .failure(let error):
                logger.error("scene \(path) not reloaded, the previous scene stays: \(error.message)")
                self?.eventListeners.emit(.error(code: error.code.rawValue, message: error.message))
                completion?(false)
            }
        }
    }

    // MARK: SceneControlling: scenes

    public func loadScene(path: String, then completion: @escaping (Result<Void, StageError>) -> Void) {
        let limits = self.limits
        prepareOffLoop(source: path, then: completion) {
            // A path that is not a regular file (a FIFO, a device node, a folder) is a wrong argument and is refused
            // unread; a file that cannot be opened is an I/O problem; neither is an invalid scene.
            let file: RegularFile
            do throws(RegularFileError) {
                file = try RegularFile(opening: path)
            } catch {
                let code: StageError.Code = if case .notRegular = error.reason { .invalidArgument } else { .ioError }
                return .failure(StageError(code, "scene file \(error)"))
            }
            do throws(SceneValidationError) {
                return .success(try SceneLoader.load(file, limits: limits))
            } catch {
                return .failure(StageError(.invalidScene, error.description))
            }
        } install: { [weak self] in
            // Live reload follows the file shown.
            guard let self, let watcher = self.watcher, watcher.path != path else { return }
            do { try self.watch(path: path) } catch { logger.error("scene \(path): not watched for changes: \(error)") }
        }
    }

    /// Shows the copy at `file` of the scene fetched from `url` (kioskd's asset cache), read and laid out off the
    /// loop like `loadScene(path:)`: the stage's `source` becomes the URL, and no file is watched (kioskd revalidates
    /// the URL instead).
    public func loadScene(remoteCopy file: String, url: String, then completion: @escaping (Result<Void, StageError>) -> Void) {
        let limits = self.limits
        prepareOffLoop(source: url, then: completion) {
            do throws(SceneValidationError) {
                return .success(try SceneLoader.load(remoteCopy: file, url: url, limits: limits))
            } catch {
                return .failure(StageError(.invalidScene, error.description))
            }
        } install: { [weak self] in
            self?.watcher?.cancel()
            self?.watcher = nil
        }
    }

    public func loadScene(yaml: String, baseDirectory: String, then completion: @escaping (Result<Void, StageError>) -> Void) {
        let limits = self.limits
        prepareOffLoop(source: "inline", then: completion) {
            do throws(SceneValidationError) {
                return .success(try SceneLoader.parse(data: Data(yaml.utf8), file: "inline", baseDirectory: baseDirectory,
                                                      limits: limits))
            } catch {
                return .failure(StageError(.invalidScene, error.description))
            }
        } install: { [weak self] in
            // An inline scene has no file: the one watched until now must not replace it.
            self?.watcher?.cancel()
            self?.watcher = nil
        }
    }

    /// Runs `read` and the layout on the load queue, then, on the main thread, builds the scene (it replaces the
    /// current one once rendered), runs `install` and completes. `adjusted` false: the scene read is shown as it
    /// is (it is the one on screen, `adjustLoadedScene` already applied).
    func prepareOffLoop(source: String, adjusted: Bool = true, then completion: @escaping (Result<Void, StageError>) -> Void,
                        read: @escaping @Sendable () -> Result<LoadedScene, StageError>, install: @escaping () -> Void) {
        let queue: BackgroundJobs
        do {
            queue = try loadQueue ?? BackgroundJobs(loop: engine.loop, label: "kioskd.scene.load")
            loadQueue = queue
        } catch {
            completion(.failure(StageError(.ioError, "scene \(source): no queue to load it on: \(error)")))
            return
        }
        let screen = engine.rootLayer.frame.size, wall = self.wall?.placement(panel: screen), values = builder.values, time = builder.now()
        let identity: @Sendable (Scene) -> Scene = { scene in scene }
        let adjust = adjusted ? adjustLoadedScene : identity
        queue.run({ () -> Result<(PreparedScene, [SceneDiagnostic]), StageError> in
            read().map { loaded in
                let scene = adjust(loaded.scene)
                // The new scene's initial values fill only keys that have none (see `replace`).
                let merged = values.merging(scene.data) { current, _ in current }
                return (SceneBuilder.prepare(scene, source: source, screen: screen, wall: wall, values: merged, time: time),
                        loaded.warnings)
            }
        }, then: { [weak self] result in
            switch result {
            case .success(let (prepared, warnings)):
                guard let self else { return }
                for warning in warnings { logger.warning("\(warning)") }
                self.replace(with: prepared)
                install()
                completion(.success(()))
            case .failure(let error):
                completion(.failure(error))
            }
        })
    }

    public var sceneDescription: PropertyValue {
        let size = root.frame
        return .object([
            "source": .string(source),
            "size": .object(["width": .number(Double(size.width)), "height": .number(Double(size.height))]),
            "pages": .array(scene.pages.map { .string($0.name) }),
            "current_page": .string(currentPage),
            "data_keys": .array(Set(byKey.keys).union(builder.values.keys).sorted().map { .string($0) }),
            "widgets": .array(nodes.compactMap { node in
                guard let id = node.id else { return nil }
                return .object(["id": .string(id), "type": .string(node.widget.type.rawValue), "page": .string(node.page)])
            }),
        ])
    }

    /// Swaps in a new scene: built now, shown when all of it has rendered (see the type's documentation). Data
    /// values set at run time are kept; the new scene's initial values fill only keys that have none.
    private func replace(with prepared: PreparedScene) {
        for (key, value) in prepared.scene.data where builder.values[key] == nil { builder.values[key] = value }
        if let incoming { incoming.root.removeFromParent() }
        let built = builder.build(prepared, currentPage: currentPage)
        updateRanges(of: built)
        incoming = built
        built.root.didRender = { [weak self] layer, finished in
            guard finished, let self, let incoming = self.incoming, incoming.root === layer else { return }
            self.completeReplacement()
        }
        engine.rootLayer.addChild(built.root)
    }

    /// The incoming scene rendered completely: it takes over in the frame being composed.
    private func completeReplacement() {
        guard let built = incoming else { return }
        incoming = nil
        built.root.didRender = nil
        sceneAppeared = true
        settledBeforeAppearing = nil
        transition?.cancel()
        transition = nil
        let old = root
        adopt(built)
        old.removeFromParent()
        schedulePageAdvance()
        applySchedule(now: false)
        eventListeners.emit(.sceneLoaded(source: source, pages: scene.pages.map(\.name)))
    }

    private func adopt(_ built: BuiltScene) {
        scene = built.scene
        source = built.source
        root = built.root
        pageLayers = built.pageLayers
        nodes = built.nodes
        byID = built.byID
        byKey = built.byKey
        backgroundLayer = built.backgroundLayer
        if !scene.pages.contains(where: { $0.name == currentPage }) { currentPage = scene.pages.first?.name ?? "" }
        showOnly(currentPage)
        updateRanges()
        motion.start(nodes, of: scene)
        videos.adopt(nodes, scene: scene, currentPage: currentPage)
        webs.adopt(nodes, currentPage: currentPage)
    }

    /// Purges the pages out of range and renders ahead those that entered it (see `PageRange`).
    private func updateRanges() {
        let remaining = pageTimerDue.map { max(0, ($0 - engine.loop.now).milliseconds / 1000) }
        ranges.update(pages: scene.pages.map { PageRange.Page(name: $0.name, duration: $0.duration) },
                      current: currentPage, remaining: remaining,
                      transition: transition.map { [$0.incomingPage, $0.outgoingPage] } ?? [], layers: pageLayers) { [weak self] in
            self?.updateRanges()
        }
    }

    /// The same for a scene built and not installed yet: its pages out of range never render.
    private func updateRanges(of built: BuiltScene) {
        let page = built.pageLayers[currentPage] == nil ? built.scene.pages.first?.name ?? "" : currentPage
        let duration = built.scene.pages.first { $0.name == page }?.duration
        ranges.update(pages: built.scene.pages.map { PageRange.Page(name: $0.name, duration: $0.duration) },
                      current: page, remaining: duration, transition: [], layers: built.pageLayers) {}
    }

    /// Re-renders each clock whose text changed (a minutes-only clock re-renders once a minute).
    public func tickClocks() {
        motion.tickClocks()
    }

    // MARK: SceneControlling: data

    public func setData(_ newValues: [String: String]) throws(StageError) {
        if let problem = dataLimits.problem(newValues, existing: builder.values) { throw problem }
        var changed: [String: String] = [:]
        for (key, value) in newValues where builder.values[key] != value || byKey[key]?.contains(where: { $0.widget.type == .sparkline }) == true {
            builder.values[key] = value
            changed[key] = value
        }
        guard !changed.isEmpty else { return }
        var touched: [ObjectIdentifier: WidgetNode] = [:]
        for key in changed.keys {
            for node in byKey[key] ?? [] { touched[ObjectIdentifier(node)] = node }
            if let incoming { for node in incoming.byKey[key] ?? [] { touched[ObjectIdentifier(node)] = node } }
        }
        for node in touched.values { refreshBound(node, changedKeys: changed) }
        webs.dataChanged(changed)
        eventListeners.emit(.dataChanged(changed))
    }

    public func data(keys: [String]?) -> [String: String] {
        guard let keys else { return builder.values }
        var result: [String: String] = [:]
        for key in keys { if let v = builder.values[key] { result[key] = v } }
        return result
    }

    private func refreshBound(_ node: WidgetNode, changedKeys: [String: String]) {
        switch node.widget.content {
        case .progress(let p):
            motion.animateProgress(node, to: builder.progressValue(p))
        case .sparkline(let s):
            if let text = changedKeys[s.bind], let v = Double(text.trimmingCharacters(in: .whitespaces)) {
                node.series.append(v)
                if node.series.count > s.capacity { node.series.removeFirst(node.series.count - s.capacity) }
            }
            node.body?.content = builder.content(for: node, scene: scene)
        case .ticker, .button:
            builder.configure(node, scene: scene)
        default:
            node.body?.content = builder.content(for: node, scene: scene)
        }
        motion.playChangeEffect(on: node)
    }

    // MARK: SceneControlling: pages

    public func showPage(_ name: String, transition requested: Transition?) throws(StageError) {
        guard let page = scene.pages.first(where: { $0.name == name }), let incomingLayer = pageLayers[name] else {
            throw StageError(.notFound, "no page named '\(name)' (pages: \(scene.pages.map(\.name).joined(separator: ", ")))")
        }
        guard name != currentPage else { return }
        let outgoing = pageLayers[currentPage]
        let spec = requested ?? page.transition
        self.transition?.finish()
        let outgoingName = currentPage
        currentPage = name
        videos.pageShown(name)
        webs.pageShown(name)
        eventListeners.emit(.pageShown(name: name))
        schedulePageAdvance()
        // A purged page renders first (`updateRanges` restores it), then shows whole: a cut waits like a transition.
        let purged = engine.isPurged(incomingLayer), waits = purged || engine.isRendering(incomingLayer)
        guard let outgoing, (spec.kind != .cut && spec.duration > 0) || waits else {
            showOnly(name)
            updateRanges()
            pageSettled(name)
            return
        }
        // Pages with nothing moving on them are flattened for the transition (see `PageTransition`).
        let moving = Set(nodes.filter { node in
            if case .ticker = node.widget.content { return true }
            return node.body?.prefersOverlayPlane == true
        }.map(\.page))
        let flattening = [(name, incomingLayer), (outgoingName, outgoing)].filter { !moving.contains($0.0) }.map(\.1)
        let transition = PageTransition(spec: spec, incoming: incomingLayer, outgoing: outgoing, engine: engine,
                                        width: root.frame.width, flattening: flattening) { [weak self] in
            self?.transition = nil
            self?.updateRanges()
            self?.pageSettled(name)
        }
        transition.incomingPage = name
        transition.outgoingPage = outgoingName
        if waits { transition.onReady = { [weak engine] waited in engine?.recordPageReady(waited) } }
        self.transition = transition
        updateRanges()
        transition.start()
    }

    private func pageSettled(_ name: String) {
        if sceneAppeared { pageSettledListeners.emit(name) } else { settledBeforeAppearing = name }
        if scheduleChangePending { applySchedule(now: true) }
    }

    /// True while the page changes because the one shown ran its time (its duration, its video): `pageShown`
    /// listeners read it to tell a page that ran to its end from one cut short.
    public private(set) var isChangingAtTurn = false

    /// Whether a page transition is running.
    public var isInTransition: Bool { transition != nil }

    private func showOnly(_ name: String) {
        for (pageName, layer) in pageLayers {
            layer.isHidden = pageName != name
            layer.opacity = 1
            layer.transform = .identity
            layer.zPosition = 0
        }
    }

    /// Pages with a `duration` advance by themselves, in order, looping (a signage loop).
    private func schedulePageAdvance() {
        pageTimer?.cancel()
        pageTimer = nil
        pageTimerDue = nil
        if let turnWatch {
            engine.removeAnimation(turnWatch)
            self.turnWatch = nil
        }
        if let timeline, let loop = GroupPageLoop(scene: scene, schedule: pageSchedule) {
            followGroupLoop(loop, timeline: timeline)
            return
        }
        guard let index = scene.pages.firstIndex(where: { $0.name == currentPage }),
              let seconds = scene.pages[index].duration, scene.pages.count > 1 else { return }
        pageTimerDue = engine.loop.now + .milliseconds(Int64(seconds * 1000))
        pageTimer = engine.loop.addTimer(after: .milliseconds(Int64(seconds * 1000))) { [weak self] in
            // The next page is the schedule's choice at the turn, not when the page was shown.
            guard let self else { return }
            if let next = self.pageAtTurn(), next != self.currentPage {
                self.isChangingAtTurn = true
                defer { self.isChangingAtTurn = false }
                try? self.showPage(next, transition: nil)
            } else {
                self.schedulePageAdvance()
            }
        }
        // The next pages' ranges follow the new deadline.
        updateRanges()
    }

    /// The group's time, in a sync group: the page loop, tickers and clocks run on it (`GroupPageLoop`,
    /// `SceneMotion.timeline`, `SceneBuilder.clockTime`). Setting it re-arms the page loop and the clocks' tick.
    public var timeline: GroupTimeline? {
        didSet {
            builder.timeline = timeline
            motion.timeline = timeline
            schedulePageAdvance()
        }
    }

    /// Shows the page the group's loop is on now (at once, a cut, for a member that joins or was away), then arms
    /// a timer for the next change early enough that its frame is presented at the vblank nearest the change's
    /// group time. While the group's time is not known, looks again every 250 ms.
    private func followGroupLoop(_ loop: GroupPageLoop, timeline: GroupTimeline) {
        let now = engine.loop.now
        // A change made now is presented at the next vblank, or, while something animates (a flip is always in
        // flight), at the one after: what is shown is the page due that far ahead, and half a frame more, so that
        // each turn flips at the vblank nearest its group time.
        let frame = engine.backend?.info.mode.frameDuration ?? .milliseconds(16)
        let lead = frame / 2 + (engine.isAnimating ? frame : .zero)
        guard let time = turnBeingMade ?? timeline.groupTime(at: now + lead) else {
            pageTimer = engine.loop.addTimer(after: .milliseconds(250)) { [weak self] in self?.schedulePageAdvance() }
            return
        }
        let position = loop.position(at: time)
        if position.page != currentPage, !isInTransition {
            isChangingAtTurn = true
            // A turn's flip is measured against the turn's group time (`turnPhaseErrors`).
            if let turn = pendingGroupTurn { groupTurn = (turn, false) }
            pendingGroupTurn = nil
            try? showPage(position.page, transition: joinedGroupLoop ? nil : .cut)
            isChangingAtTurn = false
            // showPage re-armed the loop.
            return
        }
        joinedGroupLoop = true
        pageTimerDue = now + max(Duration.nanoseconds(position.untilNext), .milliseconds(1))
        let turn = time + position.untilNext
        // The timer only starts watching the display link, five frames ahead of the turn (its own lateness does
        // not matter then); the turn itself is made in a tick, for that tick's vblank.
        let wait = max(Duration.nanoseconds(position.untilNext) + lead - frame * 5, .milliseconds(1))
        pageTimer = engine.loop.addTimer(after: wait) { [weak self] in self?.watchTurn(turn, frame: frame) }
        updateRanges()
    }

    /// Makes the group turn due at group time `turn` in the display-link tick from which it is presented at the
    /// vblank nearest it (the first less than half a frame before it, or after it), so the turn flips there however
    /// late the timers run. Where a change made in a tick lands is the engine's to say
    /// (`LayerEngine.expectedVblank(forChangeAt:)`: the tick's next vblank with a repaint window open, the one after
    /// while the flip presented at the tick is on its way). The target keeps flips coming for the few frames it
    /// waits.
    private func watchTurn(_ turn: Int64, frame: Duration) {
        pageTimer = nil
        let half = frame.nanosecondsClamped / 2
        turnWatch = engine.addAnimation(target: self) { stage, tick in
            guard let timeline = stage.timeline else { return false }
            let lands = stage.engine.expectedVblank(forChangeAt: stage.engine.loop.now) ?? tick.nextVblank + frame
            guard let shown = timeline.groupTime(at: lands), shown >= turn - half else { return true }
            stage.turnWatch = nil
            stage.pendingGroupTurn = turn
            // The page of the turn, whatever the group time is now (`followGroupLoop` would look a lead ahead).
            stage.turnBeingMade = turn
            stage.schedulePageAdvance()
            stage.turnBeingMade = nil
            return false
        }
    }

    /// Where a video on `page` has its position zero on the group's clock: the page's most recent turn in the
    /// group's page loop (looked up a little ahead, as a turn is made a frame or two early), else the group clock's
    /// zero. Nil outside a sync group, or while the group's time is not known in a page loop.
    func groupVideoTiming(page: String) -> (timeline: GroupTimeline, anchor: Int64)? {
        guard let timeline else { return nil }
        guard let loop = GroupPageLoop(scene: scene, schedule: pageSchedule) else { return (timeline, 0) }
        guard let time = timeline.groupTime(at: engine.loop.now + .milliseconds(100)),
              let start = loop.lastStart(of: page, atOrBefore: time) else { return nil }
        return (timeline, start)
    }

    /// A `duration: video` page's video finished: the next page follows, if `page` is still the current one.
    private func advance(from page: String) {
        guard page == currentPage, scene.pages.count > 1, let next = pageAtTurn(), next != page else { return }
        isChangingAtTurn = true
        defer { isChangingAtTurn = false }
        try? showPage(next, transition: nil)
    }

    // MARK: SceneControlling: widgets

    public func widget(id: String) throws(StageError) -> [String: PropertyValue] {
        guard let node = byID[id] else { throw StageError(.notFound, "no widget with id '\(id)'") }
        return WidgetProperties.describe(node, values: builder.values)
    }

    public func setWidget(id: String, properties: [String: PropertyValue],
                          then completion: @escaping (Result<Void, StageError>) -> Void) {
        guard let node = byID[id] else { return completion(.failure(StageError(.notFound, "no widget with id '\(id)'"))) }
        let change: WidgetProperties.Change
        do { change = try WidgetProperties.parse(properties, for: node, baseDirectory: baseDirectory) } catch {
            return completion(.failure(error))
        }
        guard let image = change.imageToCheck else {
            apply(change, to: node)
            return completion(.success(()))
        }
        // The image file is opened and its header read on a worker: a FIFO, a slow or hung file system must not stop
        // the loop.
        let queue: BackgroundJobs
        do {
            queue = try fileCheckQueue ?? BackgroundJobs(loop: engine.loop, label: "kioskd.widget.files")
            fileCheckQueue = queue
        } catch {
            return completion(.failure(StageError(.ioError, "props.path: no queue to check '\(image.name)' on: \(error)")))
        }
        let maximumPixels = limits.maximumImagePixels
        queue.run({ ImageFileCheck.problem(at: image.path, named: image.name, maximumPixels: maximumPixels) },
                  then: { [weak self] problem in
            if let problem { return completion(.failure(StageError(.invalidArgument, "props.path: \(problem)"))) }
            // The scene may have been replaced while the file was checked.
            guard let self, self.byID[id] === node else {
                return completion(.failure(StageError(.notFound, "widget '\(id)' was replaced while its image was checked")))
            }
            self.apply(change, to: node)
            completion(.success(()))
        })
    }

    private func apply(_ change: WidgetProperties.Change, to node: WidgetNode) {
        change.apply(to: node)
        if change.movesWidget, let pageLayer = pageLayers[node.page] {
            let tops = nodes.filter { $0.page == node.page && $0.layer.parent === pageLayer }
            builder.relayout(tops, in: pageLayer.frame.size, scene: scene)
        }
        for n in node.flattened { builder.configure(n, scene: scene); motion.startTicker(n) }
        videos.widgetsChanged()
        webs.widgetsChanged()
    }

    /// The folder relative image paths of `widget.set` resolve against: the scene file's.
    private var baseDirectory: String {
        source == "inline" ? FileManager.default.currentDirectoryPath : (source as NSString).deletingLastPathComponent
    }

    // MARK: SceneControlling: animation

    public func animate(id: String, property: String, to: [Double], _ request: AnimationRequest, at: Int64?) throws(StageError) {
        guard let node = byID[id] else { throw StageError(.notFound, "no widget with id '\(id)'") }
        let key = "\(ObjectIdentifier(node)) \(property)"
        // A newer animation of the property replaces one still waiting for its start.
        pendingAnimations.removeValue(forKey: key)?.cancel()
        guard let at else {
            return try StageAnimations.animate(node, property: property, to: to, request: request, stage: self)
        }
        // The start on this kiosk's clock: the group's time (or the wall clock's) now, and the distance to `at`.
        let now = engine.loop.now
        let ahead = at - builder.clockTime().nanoseconds
        guard ahead <= Self.maximumAnimationLead.nanosecondsClamped else {
            throw StageError(.invalidArgument, "at: \(Double(ahead) / 1e9) s ahead; an animation starts at most \(Self.maximumAnimationLead) ahead")
        }
        let start = now + .nanoseconds(ahead)
        // Checked now, so a bad request is refused at once and not when it was to start.
        try StageAnimations.animate(node, property: property, to: to, request: request, start: start, animator: Animator(), stage: self)
        // Added a little before its start (a frame of the display link is the most it can be late by), so the
        // display link does not run while it waits; one that started already catches up at once.
        let frame = engine.backend?.info.mode.frameDuration ?? .milliseconds(16)
        let wait = (start - now) - frame * 2
        guard wait > .zero else {
            return try StageAnimations.animate(node, property: property, to: to, request: request, start: start, stage: self)
        }
        pendingAnimations[key] = engine.loop.addTimer(after: wait) { [weak self, weak node] in
            guard let self, let node else { return }
            self.pendingAnimations[key] = nil
            // The scene may have been replaced meanwhile: only a widget still shown is animated.
            guard self.byID[id] === node else { return }
            try? StageAnimations.animate(node, property: property, to: to, request: request, start: start, stage: self)
        }
    }

    /// How far ahead `animate`'s `at` may be.
    public static let maximumAnimationLead: Duration = .seconds(3600)

    /// Re-renders a node's body after an animation changed its model (colours).
    func redraw(_ node: WidgetNode) {
        builder.configure(node, scene: scene)
    }

    /// Moves a progress bar's fill without the easing `data.set` uses (the `animate` command drives it).
    func setProgress(_ node: WidgetNode, _ value: Double) {
        node.progressShown = value
        node.body?.frame = builder.progressFrame(node, value: value)
    }
}
