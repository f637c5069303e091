import Foundation
import Glibc
import KioskCore
import KioskRender
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.scene")

/// The running scene: a validated `Scene` as a layer tree on a `LayerEngine`, kept up to date with data, the
/// clock, page changes, `widget.set` and live reloads. What the control socket drives (`SceneControlling`).
///
/// Tree: the engine's root holds one stage root per scene, sized to the scene (the display's scene size, or the
/// scene's fixed size scaled to fit and centred). The stage root is a transaction group: after a load nothing of
/// the new scene is shown until every widget of it has rendered, and then it replaces the previous scene in one
/// frame. It also makes a data update that redraws many widgets land in one frame. Under it, one layer per page,
/// hidden except the current one (hidden layers still render, so a page change shows a complete page), and
/// under each page one layer per widget (see `WidgetNode`).
///
/// Lives on the main thread with the engine; nothing here is touched from render workers.
public final class SceneStage: SceneControlling {
    public let engine: LayerEngine
    /// Runs `animate` requests, on the engine's display link.
    public let animator: Animator
    public private(set) var scene: Scene
    /// The scene file, or `"inline"` for a scene given as text.
    public private(set) var source: String
    public private(set) var currentPage: String
    public var onEvent: ((StageEvent) -> Void)?
    /// Applied to every scene loaded after this stage was made (reloads, `scene.load`): `--fps-overlay` adds its
    /// `fps` widget here so the overlay survives a reload.
    public var adjustLoadedScene: (Scene) -> Scene = { $0 }
    /// Placeholder shown for a bound key with no value yet.
    public static let placeholder = "–"

    private var values: [String: String]
    private(set) var root: Layer
    private var pageLayers: [String: Layer] = [:]
    private(set) var nodes: [WidgetNode] = []
    private var byID: [String: WidgetNode] = [:]
    private var byKey: [String: [WidgetNode]] = [:]
    /// A loaded scene waiting for its first complete render before it replaces `root`.
    private var incoming: Built?
    private var clockTimer: TimerHandle?
    private var fpsTimer: TimerHandle?
    private var pageTimer: TimerHandle?
    private var watcher: SceneFileWatcher?
    private var transition: PageTransition?
    private let now: () -> Int

    /// What `build` made for one scene, installed all at once.
    private struct Built {
        var scene: Scene
        var source: String
        var root: Layer
        var pageLayers: [String: Layer]
        var nodes: [WidgetNode]
        var byID: [String: WidgetNode]
        var byKey: [String: [WidgetNode]]
    }

    /// Shows `scene` on `engine` (its first page). `clock` gives the wall-clock time clocks show, in seconds since
    /// the epoch (tests pass a fixed one).
    public init(engine: LayerEngine, scene: Scene, source: String, clock: @escaping () -> Int = { Int(time(nil)) }) {
        self.engine = engine
        animator = Animator(engine: engine)
        self.scene = scene
        self.source = source
        self.now = clock
        values = scene.data
        currentPage = scene.pages.first?.name ?? ""
        root = Layer(name: "scene")
        let built = build(scene, source: source)
        adopt(built)
        engine.rootLayer.addChild(built.root)
        startTimers()
        engine.onRenderFailed = { [weak self] layer, message in
            self?.onEvent?(.error(code: "render_failed", message: "widget \(layer): \(message)"))
        }
    }

    /// Loads and shows the scene file at `path`; throws the validation errors (`SceneValidationError`).
    public convenience init(engine: LayerEngine, path: String, clock: @escaping () -> Int = { Int(time(nil)) }) throws {
        let loaded = try SceneLoader.load(path: path)
        for warning in loaded.warnings { logger.warning("\(warning)") }
        self.init(engine: engine, scene: loaded.scene, source: path, clock: clock)
    }

    deinit {
        clockTimer?.cancel()
        fpsTimer?.cancel()
        pageTimer?.cancel()
        watcher?.cancel()
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

    /// Reloads the scene file now (SIGHUP, or the watcher). Returns whether the new scene was accepted.
    @discardableResult
    public func reload(path: String) -> Bool {
        do {
            try loadScene(path: path)
            logger.notice("scene \(path) reloaded")
            return true
        } catch {
            logger.error("scene \(path) not reloaded, the previous scene stays: \(error.message)")
            onEvent?(.error(code: error.code.rawValue, message: error.message))
            return false
        }
    }

    // MARK: SceneControlling: scenes

    public func loadScene(path: String) throws(StageError) {
        // A file that cannot be opened is an I/O problem, not an invalid scene.
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StageError(.ioError, "scene file \(path): \(errnoDescription(errno))") }
        close(fd)
        let loaded: LoadedScene
        do {
            loaded = try SceneLoader.load(path: path)
        } catch {
            throw StageError(.invalidScene, error.description)
        }
        for warning in loaded.warnings { logger.warning("\(warning)") }
        replace(with: loaded.scene, source: path)
        // Live reload follows the file shown.
        if let watcher, watcher.path != path {
            do { try watch(path: path) } catch { logger.error("scene \(path): not watched for changes: \(error)") }
        }
    }

    public func loadScene(yaml: String, baseDirectory: String) throws(StageError) {
        let loaded: LoadedScene
        do {
            loaded = try SceneLoader.parse(data: Data(yaml.utf8), file: "inline", baseDirectory: baseDirectory)
        } catch {
            throw StageError(.invalidScene, error.description)
        }
        for warning in loaded.warnings { logger.warning("\(warning)") }
        replace(with: loaded.scene, source: "inline")
        // An inline scene has no file: the one watched until now must not replace it.
        watcher?.cancel()
        watcher = nil
    }

    public var sceneDescription: PropertyValue {
        let size = root.frame
        return .object([
            "source": .string(source),
            "size": .object(["width": .number(Double(size.width)), "height": .number(Double(size.height))]),
            "pages": .array(scene.pages.map { .string($0.name) }),
            "current_page": .string(currentPage),
            "data_keys": .array(Set(byKey.keys).union(values.keys).sorted().map { .string($0) }),
            "widgets": .array(nodes.compactMap { node in
                guard let id = node.id else { return nil }
                return .object(["id": .string(id), "type": .string(node.widget.type.rawValue), "page": .string(node.page)])
            }),
        ])
    }

    /// Swaps in a new scene: built now, shown when all of it has rendered (see the type's documentation). Data
    /// values set at run time are kept; the new scene's initial values fill only keys that have none.
    private func replace(with loaded: Scene, source: String) {
        let scene = adjustLoadedScene(loaded)
        for (key, value) in scene.data where values[key] == nil { values[key] = value }
        if let incoming { incoming.root.removeFromParent() }
        let built = build(scene, source: source)
        incoming = built
        built.root.didDisplay = { [weak self] layer, finished in
            guard finished, let self, let incoming = self.incoming, incoming.root === layer else { return }
            self.completeReplacement()
        }
        engine.rootLayer.addChild(built.root)
    }

    /// The incoming scene rendered completely: it takes over in the frame being composed.
    private func completeReplacement() {
        guard let built = incoming else { return }
        incoming = nil
        built.root.didDisplay = nil
        transition?.cancel()
        transition = nil
        let old = root
        adopt(built)
        old.removeFromParent()
        if !scene.pages.contains(where: { $0.name == currentPage }) {
            currentPage = scene.pages.first?.name ?? ""
        }
        showOnly(currentPage)
        startTimers()
        onEvent?(.sceneLoaded(source: source, pages: scene.pages.map(\.name)))
    }

    private func adopt(_ built: Built) {
        scene = built.scene
        source = built.source
        root = built.root
        pageLayers = built.pageLayers
        nodes = built.nodes
        byID = built.byID
        byKey = built.byKey
        if !scene.pages.contains(where: { $0.name == currentPage }) { currentPage = scene.pages.first?.name ?? "" }
        showOnly(currentPage)
        for node in nodes { startMotion(of: node) }
    }

    // MARK: Building

    /// The size the scene is laid out at.
    private func layoutSize(of scene: Scene) -> Size {
        switch scene.size {
        case .display: engine.rootLayer.frame.size
        case .fixed(let width, let height): Size(width: width, height: height)
        }
    }

    private func build(_ scene: Scene, source: String) -> Built {
        let size = layoutSize(of: scene)
        let screen = engine.rootLayer.frame.size
        let root = Layer(frame: Rect(x: (screen.width - size.width) / 2, y: (screen.height - size.height) / 2,
                                     width: size.width, height: size.height), name: "scene")
        if case .fixed = scene.size {
            let scale = min(Double(screen.width) / Double(size.width), Double(screen.height) / Double(size.height))
            root.transform = .scale(scale)
        }
        root.content = RectContent(fill: scene.background.map(StyleMapping.fill) ?? .solid(.black))
        root.holdsChildrenUntilReady = true
        var built = Built(scene: scene, source: source, root: root, pageLayers: [:], nodes: [], byID: [:], byKey: [:])
        for page in scene.pages {
            let pageLayer = Layer(frame: Rect(size: size), name: "page \(page.name)")
            pageLayer.isHidden = page.name != currentPage
            root.addChild(pageLayer)
            built.pageLayers[page.name] = pageLayer
            let laidOut = SceneLayout.layout(page.widgets, in: size) { [self] widget, maxWidth in
                naturalSize(of: widget, maxWidth: maxWidth, scene: scene)
            }
            for item in laidOut {
                let node = makeNode(item, page: page.name, scene: scene)
                pageLayer.addChild(node.layer)
                for n in node.flattened {
                    built.nodes.append(n)
                    if let id = n.id { built.byID[id] = n }
                    for key in n.boundKeys { built.byKey[key, default: []].append(n) }
                }
            }
        }
        return built
    }

    private func makeNode(_ item: LaidOutWidget, page: String, scene: Scene) -> WidgetNode {
        let node = WidgetNode(widget: item.widget, page: page)
        if case .progress(let p) = item.widget.content { node.progressShown = progressValue(p) }
        node.layer.frame = item.frame
        configure(node, scene: scene)
        for child in item.children {
            let childNode = makeNode(child, page: page, scene: scene)
            node.children.append(childNode)
            node.layer.addChild(childNode.layer)
        }
        return node
    }

    /// Sets the node's layers from its model: box, body, opacity. Called at build and after `widget.set`.
    private func configure(_ node: WidgetNode, scene: Scene) {
        let widget = node.widget
        let style = widget.style
        let layer = node.layer
        layer.opacity = style.opacity ?? 1
        layer.isHidden = node.isHidden
        let size = layer.frame.size
        let border = style.border.map { RectContent.Border(width: $0.width, color: StyleMapping.color($0.colour)) }
        let radius = style.cornerRadius ?? 0
        var boxFill = style.background.map(StyleMapping.fill)
        switch widget.content {
        case .panel where boxFill == nil: boxFill = .solid(Color(red: 1, green: 1, blue: 1, alpha: 0.08))
        case .progress where boxFill == nil: boxFill = .solid(Color(red: 1, green: 1, blue: 1, alpha: 0.13))
        case .button: boxFill = nil  // the button draws its own box, per state
        default: break
        }
        if widget.type == .button {
            layer.content = nil
        } else if let boxFill {
            layer.content = RectContent(fill: boxFill, cornerRadius: widget.type == .panel ? max(radius, 12) : radius, border: border)
        } else if let border {
            layer.content = RectContent(fill: .solid(.clear), cornerRadius: radius, border: border)
        } else {
            layer.content = nil
        }
        layer.clipsToBounds = widget.type == .ticker

        let inset = Int((style.border?.width ?? 0).rounded(.up))
        let bodyFrame = Rect(x: inset, y: inset, width: max(size.width - 2 * inset, 0), height: max(size.height - 2 * inset, 0))
        switch widget.content {
        case .rect, .panel, .row, .column, .stack:
            node.body?.removeFromParent()
            node.body = nil
        case .ticker:
            let body = ensureBody(node)
            body.content = content(for: node, scene: scene)
            if let ticker = body.content as? TickerTextContent, let natural = try? ticker.naturalSize() {
                node.tickerStripWidth = natural.width
                body.frame = Rect(x: body.frame.x, y: (size.height - natural.height) / 2, width: natural.width, height: natural.height)
            }
        case .progress:
            let body = ensureBody(node)
            body.content = nil
            body.backgroundColor = style.foreground.map(StyleMapping.color) ?? Color(rgb: 0x4CC2FF)
            body.frame = progressFrame(node, value: node.progressShown)
        default:
            let body = ensureBody(node)
            body.frame = bodyFrame
            body.content = content(for: node, scene: scene)
        }
    }

    private func ensureBody(_ node: WidgetNode) -> Layer {
        if let body = node.body { return body }
        let body = Layer(name: "\(node.layer.name ?? "widget").body")
        node.layer.insertChild(body, at: 0)
        node.body = body
        return body
    }

    private func progressFrame(_ node: WidgetNode, value: Double) -> Rect {
        let size = node.layer.frame.size
        return Rect(x: 0, y: 0, width: Int((Double(size.width) * min(max(value, 0), 1)).rounded()), height: size.height)
    }

    private func progressValue(_ p: ProgressProperties) -> Double {
        switch p.value {
        case .constant(let v): return v
        case .bound(let key, let lo, let hi):
            guard let text = values[key], let v = Double(text.trimmingCharacters(in: .whitespaces)), hi > lo else { return 0 }
            return min(max((v - lo) / (hi - lo), 0), 1)
        }
    }

    /// What the body of a content widget draws now.
    private func content(for node: WidgetNode, scene: Scene) -> (any LayerContent)? {
        let widget = node.widget
        let style = widget.style
        let font = StyleMapping.font(style.font, inherited: scene.font)
        let foreground = style.foreground.map(StyleMapping.color) ?? .white
        switch widget.content {
        case .text(let t):
            return TextContent(t.text.render(values, placeholder: Self.placeholder), isMarkup: t.markup, font: font,
                               color: foreground, alignment: TextContent.Alignment(rawValue: t.align.rawValue) ?? .left,
                               wrap: TextContent.Wrap(rawValue: t.wrap.rawValue) ?? .word,
                               ellipsize: TextContent.Ellipsize(rawValue: t.ellipsize.rawValue) ?? .end,
                               maxLines: t.maxLines, centersVertically: true, shrinksToFit: t.shrinkToFit)
        case .image(let i):
            return ImageContent(path: i.path, fit: ImageContent.Fit(rawValue: i.fit.rawValue) ?? .contain)
        case .clock(let c):
            let text = ClockContent.format(time: now(), format: c.format, timeZone: Self.zone(c.timezone))
            node.clockText = text
            return ClockContent(text: text, font: font, color: foreground, alignment: .left)
        case .ticker(let t):
            return TickerTextContent(t.text.render(values, placeholder: Self.placeholder), font: font, color: foreground, padding: 0)
        case .qrcode(let q):
            return QRCodeContent(text: q.text.render(values, placeholder: Self.placeholder),
                                 foreground: style.foreground.map(StyleMapping.color) ?? .black,
                                 background: style.background.flatMap { if case .colour(let c) = $0 { StyleMapping.color(c) } else { nil } } ?? .white)
        case .sparkline:
            return SparklineContent(values: node.series, color: foreground,
                                    fill: Color(red: foreground.red, green: foreground.green, blue: foreground.blue, alpha: 0.2))
        case .button(let b):
            let state: ButtonProperties.State = b.enabled ? node.buttonState : .disabled
            let look = b.states[state].map { merged(style, $0) } ?? style
            return ButtonContent(label: b.label.render(values, placeholder: Self.placeholder),
                                 font: StyleMapping.font(look.font, inherited: scene.font),
                                 textColor: look.foreground.map(StyleMapping.color) ?? .white,
                                 fill: look.background.map(StyleMapping.fill) ?? .solid(Color(rgb: 0x2F6FEB)),
                                 cornerRadius: look.cornerRadius ?? 10,
                                 border: look.border.map { RectContent.Border(width: $0.width, color: StyleMapping.color($0.colour)) },
                                 state: ButtonContent.State(rawValue: state.rawValue) ?? .normal)
        case .fps:
            let stats = engine.stats
            return FPSOverlayContent(framesPerSecond: stats.fps, frameMilliseconds: stats.fps > 0 ? 1000 / stats.fps : 0,
                                     droppedFrames: stats.staleRendersDropped)
        case .rect, .panel, .progress, .row, .column, .stack:
            return nil
        }
    }

    private func merged(_ base: Style, _ over: Style) -> Style {
        Style(background: over.background ?? base.background, foreground: over.foreground ?? base.foreground,
              cornerRadius: over.cornerRadius ?? base.cornerRadius, border: over.border ?? base.border,
              opacity: over.opacity ?? base.opacity, font: over.font ?? base.font)
    }

    static func zone(_ name: String?) -> ClockContent.TimeZone {
        guard let name else { return .local }
        return name == "UTC" ? .utc : .named(name)
    }

    /// A widget's natural size for layout: text and the like measure their text; the rest have none.
    private func naturalSize(of widget: Widget, maxWidth: Double?, scene: Scene) -> Size? {
        let font = StyleMapping.font(widget.style.font, inherited: scene.font)
        let inset = 2 * Int((widget.style.border?.width ?? 0).rounded(.up))
        func measure(_ text: String, markup: Bool = false) -> Size {
            let s = TextContent.measure(text, isMarkup: markup, font: font, maxWidth: maxWidth.map { max(Int($0) - inset, 1) })
            return Size(width: s.width + inset, height: s.height + inset)
        }
        switch widget.content {
        case .text(let t): return measure(t.text.render(values, placeholder: Self.placeholder), markup: t.markup)
        case .clock(let c): return measure(ClockContent.format(time: now(), format: c.format, timeZone: Self.zone(c.timezone)))
        case .button(let b):
            let s = measure(b.label.render(values, placeholder: Self.placeholder))
            return Size(width: s.width + 48, height: s.height + 24)
        case .ticker(let t):
            let s = measure(t.text.render(values, placeholder: Self.placeholder))
            return Size(width: Int(maxWidth ?? Double(s.width)), height: s.height + 8)
        case .fps: return Size(width: 160, height: 36)
        default: return nil
        }
    }

    // MARK: Moving parts

    private func startTimers() {
        clockTimer?.cancel()
        fpsTimer?.cancel()
        clockTimer = nil
        fpsTimer = nil
        if nodes.contains(where: { $0.widget.type == .clock }) {
            // Fire just after each second boundary of the wall clock, when a clock's text can change.
            var ts = timespec()
            clock_gettime(CLOCK_REALTIME, &ts)
            let untilNextSecond = Duration.nanoseconds(1_000_000_000 - Int64(ts.tv_nsec) + 2_000_000)
            clockTimer = engine.loop.addTimer(after: untilNextSecond, repeating: .seconds(1)) { [weak self] in self?.tickClocks() }
        }
        if nodes.contains(where: { $0.widget.type == .fps }) {
            fpsTimer = engine.loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { [weak self] in self?.tickFPS() }
        }
        schedulePageAdvance()
    }

    /// Re-renders each clock whose text changed (a minutes-only clock re-renders once a minute).
    public func tickClocks() {
        let time = now()
        for node in nodes {
            guard case .clock(let c) = node.widget.content, let body = node.body else { continue }
            let text = ClockContent.format(time: time, format: c.format, timeZone: Self.zone(c.timezone))
            guard text != node.clockText else { continue }
            body.content = content(for: node, scene: scene)
        }
    }

    private func tickFPS() {
        for node in nodes where node.widget.type == .fps {
            node.body?.content = content(for: node, scene: scene)
        }
    }

    /// Tickers move on the display link: the strip's position is a function of the vblank time, so the text is
    /// rendered once and only moves.
    private func startMotion(of node: WidgetNode) {
        guard case .ticker = node.widget.content, node.body != nil else { return }
        node.tickerStart = nil
        if let token = node.tickerToken { engine.removeAnimation(token) }
        node.tickerToken = engine.addAnimation(target: node) { node, tick in
            guard node.body != nil else { return false }
            let start = node.tickerStart ?? tick.nextVblank
            node.tickerStart = start
            SceneStage.placeTicker(node, at: (tick.nextVblank - start).milliseconds / 1000)
            return true
        }
    }

    /// Puts a ticker's strip where it is `t` seconds after it started: entering at the right edge, leaving at the
    /// left, then again.
    static func placeTicker(_ node: WidgetNode, at t: Double) {
        guard case .ticker(let ticker) = node.widget.content, let strip = node.body else { return }
        let width = node.layer.frame.width
        let travel = Double(width + max(node.tickerStripWidth, 1))
        let offset = (t * ticker.speed).truncatingRemainder(dividingBy: travel)
        var frame = strip.frame
        frame.x = width - Int(offset.rounded())
        if frame != strip.frame { strip.frame = frame }
    }

    // MARK: SceneControlling: data

    public func setData(_ newValues: [String: String]) {
        var changed: [String: String] = [:]
        for (key, value) in newValues where values[key] != value || byKey[key]?.contains(where: { $0.widget.type == .sparkline }) == true {
            values[key] = value
            changed[key] = value
        }
        guard !changed.isEmpty else { return }
        var touched: [ObjectIdentifier: WidgetNode] = [:]
        for key in changed.keys {
            for node in byKey[key] ?? [] { touched[ObjectIdentifier(node)] = node }
            if let incoming { for node in incoming.byKey[key] ?? [] { touched[ObjectIdentifier(node)] = node } }
        }
        for node in touched.values { refreshBound(node, changedKeys: changed) }
        onEvent?(.dataChanged(changed))
    }

    public func data(keys: [String]?) -> [String: String] {
        guard let keys else { return values }
        var result: [String: String] = [:]
        for key in keys { if let v = values[key] { result[key] = v } }
        return result
    }

    private func refreshBound(_ node: WidgetNode, changedKeys: [String: String]) {
        switch node.widget.content {
        case .progress(let p):
            animateProgress(node, to: progressValue(p))
        case .sparkline(let s):
            if let text = changedKeys[s.bind], let v = Double(text.trimmingCharacters(in: .whitespaces)) {
                node.series.append(v)
                if node.series.count > s.capacity { node.series.removeFirst(node.series.count - s.capacity) }
            }
            node.body?.content = content(for: node, scene: scene)
        case .ticker:
            configure(node, scene: scene)
        default:
            node.body?.content = content(for: node, scene: scene)
        }
        playChangeEffect(on: node)
    }

    /// A progress bar eases to its new value over a third of a second; only the fill layer's width changes.
    private func animateProgress(_ node: WidgetNode, to target: Double) {
        if let token = node.progressAnimation { engine.removeAnimation(token) }
        let from = node.progressShown
        var start: MonotonicInstant?
        node.progressAnimation = engine.addAnimation(target: node) { [weak self] node, tick in
            guard let self, let body = node.body else { return false }
            let t0 = start ?? tick.nextVblank
            start = t0
            let f = min((tick.nextVblank - t0).milliseconds / 300, 1)
            node.progressShown = from + (target - from) * TimingFunction.easeOut.value(at: f)
            body.frame = self.progressFrame(node, value: node.progressShown)
            if f >= 1 { node.progressAnimation = nil }
            return f < 1
        }
    }

    /// `on_change`: pulse scales the widget up and back; flash dims and restores it.
    private func playChangeEffect(on node: WidgetNode) {
        guard let effect = node.widget.onChange, effect != .none else { return }
        var start: MonotonicInstant?
        let baseOpacity = node.widget.style.opacity ?? 1
        engine.addAnimation(target: node.layer) { layer, tick in
            let t0 = start ?? tick.nextVblank
            start = t0
            let f = min((tick.nextVblank - t0).milliseconds / 450, 1)
            let bump = sin(Double.pi * TimingFunction.easeInOut.value(at: f))
            switch effect {
            case .pulse: layer.transform.scaleX = 1 + 0.08 * bump; layer.transform.scaleY = 1 + 0.08 * bump
            case .flash: layer.opacity = baseOpacity * (1 - 0.6 * bump)
            case .none: break
            }
            return f < 1
        }
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
        currentPage = name
        onEvent?(.pageShown(name: name))
        schedulePageAdvance()
        guard spec.kind != .cut, spec.duration > 0, let outgoing else {
            showOnly(name)
            return
        }
        let transition = PageTransition(spec: spec, incoming: incomingLayer, outgoing: outgoing, engine: engine,
                                        width: root.frame.width) { [weak self] in self?.transition = nil }
        self.transition = transition
        transition.start()
    }

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
        guard let index = scene.pages.firstIndex(where: { $0.name == currentPage }),
              let seconds = scene.pages[index].duration, scene.pages.count > 1 else { return }
        let next = scene.pages[(index + 1) % scene.pages.count].name
        pageTimer = engine.loop.addTimer(after: .milliseconds(Int64(seconds * 1000))) { [weak self] in
            try? self?.showPage(next, transition: nil)
        }
    }

    // MARK: SceneControlling: widgets

    public func widget(id: String) throws(StageError) -> [String: PropertyValue] {
        guard let node = byID[id] else { throw StageError(.notFound, "no widget with id '\(id)'") }
        return WidgetProperties.describe(node, values: values)
    }

    public func setWidget(id: String, properties: [String: PropertyValue]) throws(StageError) {
        guard let node = byID[id] else { throw StageError(.notFound, "no widget with id '\(id)'") }
        let change = try WidgetProperties.parse(properties, for: node, baseDirectory: baseDirectory)
        change.apply(to: node)
        if change.movesWidget { relayout(page: node.page) }
        for n in node.flattened { configure(n, scene: scene); startMotion(of: n) }
    }

    /// The folder relative image paths of `widget.set` resolve against: the scene file's.
    private var baseDirectory: String {
        source == "inline" ? FileManager.default.currentDirectoryPath : (source as NSString).deletingLastPathComponent
    }

    /// Lays a page out again from its nodes' current models, keeping the nodes and layers.
    private func relayout(page name: String) {
        guard let pageLayer = pageLayers[name] else { return }
        let tops = nodes.filter { $0.page == name && $0.layer.parent === pageLayer }
        func model(_ node: WidgetNode) -> Widget {
            var w = node.widget
            switch w.content {
            case .row(var c): c.children = node.children.map(model); w.content = .row(c)
            case .column(var c): c.children = node.children.map(model); w.content = .column(c)
            case .stack: w.content = .stack(children: node.children.map(model))
            default: break
            }
            return w
        }
        let scene = self.scene
        let laidOut = SceneLayout.layout(tops.map(model), in: pageLayer.frame.size) { [self] widget, maxWidth in
            naturalSize(of: widget, maxWidth: maxWidth, scene: scene)
        }
        func apply(_ items: [LaidOutWidget], _ nodes: [WidgetNode]) {
            for (item, node) in zip(items, nodes) {
                if node.layer.frame != item.frame {
                    node.layer.frame = item.frame
                    configure(node, scene: scene)
                }
                apply(item.children, node.children)
            }
        }
        apply(laidOut, tops)
    }

    // MARK: SceneControlling: animation

    public func animate(id: String, property: String, to: [Double], _ request: AnimationRequest) throws(StageError) {
        guard let node = byID[id] else { throw StageError(.notFound, "no widget with id '\(id)'") }
        try StageAnimations.animate(node, property: property, to: to, request: request, stage: self)
    }

    /// Re-renders a node's body after an animation changed its model (colours).
    func redraw(_ node: WidgetNode) {
        configure(node, scene: scene)
    }

    /// Moves a progress bar's fill without the easing `data.set` uses (the `animate` command drives it).
    func setProgress(_ node: WidgetNode, _ value: Double) {
        node.progressShown = value
        node.body?.frame = progressFrame(node, value: value)
    }
}
