import Foundation
import KioskCore
import KioskRender
import KioskScene
import Logging

/// A scene parsed and laid out, ready to become layers: the work of a load that can run off the loop (parsing,
/// validation, measuring text with Pango). Text is measured with the data values and the clock time of the
/// request. An immutable value; made on a background queue, used on the main thread.
struct PreparedScene: Sendable {
    var scene: Scene
    /// The scene file, or `"inline"`.
    var source: String
    /// The size the scene is laid out at, and the screen it is shown on: the engine root's size, or a video wall's
    /// whole canvas (`WallPlacement`).
    var size: Size
    var screen: Size
    /// The part of `screen` the engine root shows: all of it, or this panel's part of a wall's canvas.
    var viewport: Rect
    /// Each page's name and its widgets as laid out, in scene order.
    var pages: [(name: String, widgets: [LaidOutWidget])]
}

/// The layers and nodes made for one scene, installed all at once. Main thread.
struct BuiltScene {
    var scene: Scene
    var source: String
    var root: Layer
    var pageLayers: [String: Layer]
    var nodes: [WidgetNode]
    var byID: [String: WidgetNode]
    var byKey: [String: [WidgetNode]]
    /// The layer of `backgroundImage`, under the pages.
    var backgroundLayer: Layer? = nil
}

/// Widget to layer and content: lays a scene out (`prepare`, any thread, a pure function of values), makes its
/// layer tree (`build`), and sets a node's layers and content from its model (`configure`, `content(for:)`).
///
/// Lives on the main thread with the engine, except `prepare` and `naturalSize`, which are static and touch no
/// state.
final class SceneBuilder {
    /// Placeholder shown for a bound key with no value yet.
    static let placeholder = "–"

    let engine: LayerEngine
    /// The wall clock clocks show (`WallClock.now` but in tests).
    let wallClock: () -> WallTime
    /// The data values widgets show; the controller changes them (`data.set`).
    var values: [String: String]
    /// `memory.max_image_pixels`, for image contents.
    var maxImagePixels = ImagePixelLimit.defaultMaximum
    /// The cached files of images named by URL; without one such an image is not drawn (its background shows).
    weak var remoteAssets: RemoteAssetSource?

    /// The file to draw for an image named `path`: the path itself, or the cached copy of a URL (nil while none
    /// is held).
    func imageFile(_ path: String) -> String? {
        RemoteAsset.looksRemote(path) ? remoteAssets?.file(for: path) : path
    }
    /// The scene's background picture, or nil while a URL has no copy (the `background` colour shows).
    func backgroundContent(_ scene: Scene) -> (any LayerContent)? {
        guard let image = scene.backgroundImage, let file = imageFile(image.path) else { return nil }
        return ImageContent(path: file, fit: ImageContent.Fit(rawValue: image.fit.rawValue) ?? .cover, maxPixels: maxImagePixels)
    }

    /// What an image widget shows until its image lands, and for good when it cannot be shown (a file over the
    /// pixel limit, a broken file).
    static let imagePlaceholder = Color(red: 1, green: 1, blue: 1, alpha: 0.08)

    init(engine: LayerEngine, values: [String: String], clock: @escaping () -> WallTime) {
        self.engine = engine
        self.values = values
        wallClock = clock
    }

    /// The group's time in a sync group: clocks show it, so every member's clock turns its second at the same
    /// vblank; the wall clock otherwise, and while the group's time is not known.
    weak var timeline: GroupTimeline?

    /// The time clocks show: the group's, else the wall clock's.
    func clockTime() -> WallTime {
        timeline?.groupTime(at: engine.loop.now).map { WallTime(nanoseconds: $0) } ?? wallClock()
    }

    /// The time clocks show, in whole seconds since the epoch.
    func now() -> Int { clockTime().seconds }

    // MARK: Preparing (any thread)

    /// Lays every page of `scene` out for a `screen`-sized root, or for the canvas of the `wall` whose panels are
    /// each `screen`. Pure: safe on any thread.
    static func prepare(_ scene: Scene, source: String, screen panel: Size, wall: WallPlacement? = nil,
                        values: [String: String], time: Int) -> PreparedScene {
        let screen = wall?.canvas(panel: panel) ?? panel
        let viewport = wall?.viewport(panel: panel) ?? Rect(size: panel)
        // The scene's font files on the board, before any text is measured; those by URL come with their copies
        // (`SceneStage.remoteAssetChanged`).
        let local = scene.fonts.filter { !RemoteAsset.looksRemote($0) }
        if !local.isEmpty {
            do { try PangoFontMaps.addFontFiles(local) } catch { Logger(label: "kioskd.scene").error("scene \(source): \(error); its text falls back to other fonts") }
        }
        let size = layoutSize(of: scene, screen: screen)
        let pages = scene.pages.map { page in
            (name: page.name, widgets: SceneLayout.layout(page.widgets, in: size) { widget, maxWidth in
                naturalSize(of: widget, maxWidth: maxWidth, scene: scene, values: values, time: time)
            })
        }
        return PreparedScene(scene: scene, source: source, size: size, screen: screen, viewport: viewport, pages: pages)
    }

    /// The size a scene is laid out at.
    static func layoutSize(of scene: Scene, screen: Size) -> Size {
        switch scene.size {
        case .display: screen
        case .fixed(let width, let height): Size(width: width, height: height)
        }
    }

    /// A widget's natural size for layout: text and the like measure their text; the rest have none.
    static func naturalSize(of widget: Widget, maxWidth: Double?, scene: Scene, values: [String: String], time: Int) -> Size? {
        let font = StyleMapping.font(widget.style.font, inherited: scene.font)
        let inset = 2 * Int((widget.style.border?.width ?? 0).rounded(.up))
        func measure(_ text: String, markup: Bool = false) -> Size {
            let s = TextContent.measure(text, isMarkup: markup, font: font, maxWidth: maxWidth.map { max(Int($0) - inset, 1) })
            return Size(width: s.width + inset, height: s.height + inset)
        }
        switch widget.content {
        case .text(let t): return measure(t.text.render(values, placeholder: SceneBuilder.placeholder), markup: t.markup)
        case .clock(let c): return measure(ClockContent.format(time: time, format: c.format, timeZone: Self.zone(c.timezone)))
        case .button(let b):
            let s = measure(b.label.render(values, placeholder: SceneBuilder.placeholder))
            return Size(width: s.width + 48, height: s.height + 24)
        case .ticker(let t):
            let s = measure(t.text.render(values, placeholder: SceneBuilder.placeholder))
            return Size(width: Int(maxWidth ?? Double(s.width)), height: s.height + 8)
        case .fps: return Size(width: 160, height: 36)
        default: return nil
        }
    }

    // MARK: Building (main thread)

    /// Makes the layers of a prepared scene, showing `currentPage` (hidden pages still render).
    func build(_ prepared: PreparedScene, currentPage: String) -> BuiltScene {
        let scene = prepared.scene, size = prepared.size, screen = prepared.screen, shown = prepared.viewport
        let root = Layer(frame: Rect(x: (screen.width - size.width) / 2 - shown.x, y: (screen.height - size.height) / 2 - shown.y,
                                     width: size.width, height: size.height), name: "scene")
        if case .fixed = scene.size {
            let scale = min(Double(screen.width) / Double(size.width), Double(screen.height) / Double(size.height))
            root.transform = .scale(scale)
        }
        root.content = RectContent(fill: scene.background.map(StyleMapping.fill) ?? .solid(.black))
        root.holdsChildrenUntilReady = true
        var built = BuiltScene(scene: scene, source: prepared.source, root: root, pageLayers: [:], nodes: [], byID: [:], byKey: [:])
        if scene.backgroundImage != nil {
            let layer = Layer(frame: Rect(size: size), name: "background image")
            layer.content = backgroundContent(scene)
            root.addChild(layer)
            built.backgroundLayer = layer
        }
        for page in prepared.pages {
            let pageLayer = Layer(frame: Rect(size: size), name: "page \(page.name)")
            pageLayer.isHidden = page.name != currentPage
            root.addChild(pageLayer)
            built.pageLayers[page.name] = pageLayer
            for item in page.widgets {
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

    /// Lays the top-level `nodes` of a page out again from their current models, keeping the nodes and layers
    /// (after `widget.set` moved or resized one).
    func relayout(_ tops: [WidgetNode], in size: Size, scene: Scene) {
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
        let values = self.values, time = now()
        let laidOut = SceneLayout.layout(tops.map(model), in: size) { widget, maxWidth in
            Self.naturalSize(of: widget, maxWidth: maxWidth, scene: scene, values: values, time: time)
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

    // MARK: Layers and content (main thread)

    /// Sets the node's layers from its model: box, body, opacity. Called at build and after `widget.set`.
    func configure(_ node: WidgetNode, scene: Scene) {
        let widget = node.widget
        let style = widget.style
        let layer = node.layer
        layer.opacity = style.opacity ?? 1
        layer.isHidden = node.isHidden
        let size = layer.frame.size
        let border = style.border.map { RectContent.Border(width: $0.width, color: $0.colour) }
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
            body.backgroundColor = style.foreground ?? Color(rgb: 0x4CC2FF)
            body.frame = progressFrame(node, value: node.progressShown)
        case .button:
            configureButtonBodies(node, frame: bodyFrame, scene: scene)
        default:
            let body = ensureBody(node)
            body.frame = bodyFrame
            body.content = content(for: node, scene: scene)
            if case .image = widget.content { body.placeholderColor = Self.imagePlaceholder }
            body.prefersOverlayPlane = switch widget.content {
            case .video, .web: true
            case .image(let image): image.plane
            default: false
            }
        }
    }

    /// A button's resting look in `body` and, while it is enabled, its pressed look in `pressedBody`, both rendered
    /// whenever the button changes, so a press is a swap of two finished surfaces. A look that did not change keeps
    /// its surface. Costs one more surface of the button's size per enabled button (4 bytes a pixel).
    func configureButtonBodies(_ node: WidgetNode, frame: Rect, scene: Scene) {
        guard case .button(let b) = node.widget.content else { return }
        let body = ensureBody(node)
        body.frame = frame
        setIfChanged(body, content(for: node, scene: scene, state: b.enabled ? node.buttonState : .disabled))
        guard b.enabled else {
            node.pressedBody?.removeFromParent()
            node.pressedBody = nil
            node.isPressedDown = false
            body.isHidden = false
            return
        }
        let pressed: Layer
        if let existing = node.pressedBody {
            pressed = existing
        } else {
            pressed = Layer(name: "\(node.layer.name ?? "widget").pressed")
            node.layer.insertChild(pressed, at: 1)
            node.pressedBody = pressed
        }
        pressed.frame = frame
        setIfChanged(pressed, content(for: node, scene: scene, state: .pressed))
        showPressedLook(node, node.isPressedDown)
    }

    /// Swaps a button's shown look: no render, only which finished surface is composited.
    func showPressedLook(_ node: WidgetNode, _ pressed: Bool) {
        guard let pressedBody = node.pressedBody else { return }
        node.isPressedDown = pressed
        pressedBody.isHidden = !pressed
        node.body?.isHidden = pressed
    }

    private func setIfChanged(_ layer: Layer, _ content: (any LayerContent)?) {
        if let new = content as? ButtonContent, let old = layer.content as? ButtonContent, new == old { return }
        layer.content = content
    }

    private func ensureBody(_ node: WidgetNode) -> Layer {
        if let body = node.body { return body }
        let body = Layer(name: "\(node.layer.name ?? "widget").body")
        node.layer.insertChild(body, at: 0)
        node.body = body
        return body
    }

    func progressFrame(_ node: WidgetNode, value: Double) -> Rect {
        let size = node.layer.frame.size
        return Rect(x: 0, y: 0, width: Int((Double(size.width) * min(max(value, 0), 1)).rounded()), height: size.height)
    }

    /// `text` without the spaces and tabs around it, as `CharacterSet.whitespaces` has them (Unicode's space
    /// separators, the tab and the zero-width space), without Foundation's character sets on the startup path.
    static func trimmingSpaces(_ text: String) -> Substring {
        func space(_ c: Character) -> Bool {
            c.unicodeScalars.count == 1 && c.unicodeScalars.allSatisfy {
                $0 == "\t" || $0 == "\u{200B}" || $0.properties.generalCategory == .spaceSeparator
            }
        }
        guard let first = text.firstIndex(where: { !space($0) }), let last = text.lastIndex(where: { !space($0) }) else { return "" }
        return text[first...last]
    }

    func progressValue(_ p: ProgressProperties) -> Double {
        switch p.value {
        case .constant(let v): return v
        case .bound(let key, let lo, let hi):
            guard let text = values[key], let v = Double(Self.trimmingSpaces(text)), hi > lo else { return 0 }
            return min(max((v - lo) / (hi - lo), 0), 1)
        }
    }

    /// What the body of a content widget draws now.
    /// A button draws `state` when given, else its resting look.
    func content(for node: WidgetNode, scene: Scene, state buttonState: ButtonProperties.State? = nil) -> (any LayerContent)? {
        let widget = node.widget
        let style = widget.style
        let font = StyleMapping.font(style.font, inherited: scene.font)
        let foreground = style.foreground ?? .white
        switch widget.content {
        case .text(let t):
            return TextContent(t.text.render(values, placeholder: SceneBuilder.placeholder), isMarkup: t.markup, font: font,
                               color: foreground, alignment: TextContent.Alignment(rawValue: t.align.rawValue) ?? .left,
                               wrap: TextContent.Wrap(rawValue: t.wrap.rawValue) ?? .word,
                               ellipsize: TextContent.Ellipsize(rawValue: t.ellipsize.rawValue) ?? .end,
                               maxLines: t.maxLines, centersVertically: true, shrinksToFit: t.shrinkToFit)
        case .image(let i):
            guard let file = imageFile(i.path) else { return nil }
            return ImageContent(path: file, fit: ImageContent.Fit(rawValue: i.fit.rawValue) ?? .contain,
                                maxPixels: maxImagePixels)
        case .clock(let c):
            let text = ClockContent.format(time: now(), format: c.format, timeZone: Self.zone(c.timezone))
            node.clockText = text
            return ClockContent(text: text, font: font, color: foreground, alignment: .left)
        case .ticker(let t):
            return TickerTextContent(t.text.render(values, placeholder: SceneBuilder.placeholder), font: font, color: foreground, padding: 0)
        case .qrcode(let q):
            return QRCodeContent(text: q.text.render(values, placeholder: SceneBuilder.placeholder),
                                 foreground: style.foreground ?? .black,
                                 background: style.background.flatMap { if case .colour(let c) = $0 { c } else { nil } } ?? .white)
        case .sparkline:
            return SparklineContent(values: node.series, color: foreground,
                                    fill: Color(red: foreground.red, green: foreground.green, blue: foreground.blue, alpha: 0.2))
        case .button(let b):
            let state: ButtonProperties.State = buttonState ?? (b.enabled ? node.buttonState : .disabled)
            let look = b.states[state].map { merged(style, $0) } ?? style
            return ButtonContent(label: b.label.render(values, placeholder: SceneBuilder.placeholder),
                                 font: StyleMapping.font(look.font, inherited: scene.font),
                                 textColor: look.foreground ?? .white,
                                 fill: look.background.map(StyleMapping.fill) ?? .solid(Color(rgb: 0x2F6FEB)),
                                 cornerRadius: look.cornerRadius ?? 10,
                                 border: look.border.map { RectContent.Border(width: $0.width, color: $0.colour) },
                                 state: ButtonContent.State(rawValue: state.rawValue) ?? .normal)
        case .web(let w):
            // The placeholder: shown until the page's first frame.
            if let image = w.placeholder { return ImageContent(path: image, fit: .contain) }
            let background = style.background.flatMap { if case .colour(let c) = $0 { c } else { nil } }
            return RectContent(fill: .solid(background ?? .white))
        case .video(let v):
            // The placeholder: shown until the first frame and whenever a clip fails.
            if let image = v.placeholder { return ImageContent(path: image, fit: .contain) }
            let background = style.background.flatMap { if case .colour(let c) = $0 { c } else { nil } }
            return RectContent(fill: .solid(background ?? .black))
        case .fps:
            let stats = engine.stats
            return FPSContent(framesPerSecond: stats.fps, frameMilliseconds: stats.fps > 0 ? 1000 / stats.fps : 0,
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
}
