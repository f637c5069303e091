import Foundation
import KioskCore
import Yams

/// Walks a composed YAML tree into a `Scene`, recording a diagnostic for every problem and carrying on, so one
/// run of `kioskd check` shows them all. Each value is checked where it stands, so a diagnostic points at the
/// node (or, for unknown keys, the key) at fault, with `DocumentDecoder`'s checks. Used once, by one thread,
/// inside `SceneLoader`.
final class SceneDecoder: DocumentDecoder {
    struct FontUse {
        var family: String
        var location: SourceLocation
        var path: String
    }

    let baseDirectory: String
    let limits: SceneLimits
    private(set) var fontFamilies: [FontUse] = []
    private var ids: [String: SourceLocation] = [:]
    private var widgetCount = 0
    /// Pages named by `on_press` actions, checked once every page is known.
    var pageReferences: [(name: String, node: Node, path: String)] = []

    init(file: String, baseDirectory: String, limits: SceneLimits) {
        self.baseDirectory = baseDirectory
        self.limits = limits
        super.init(file: file)
    }

    // MARK: Keys each mapping may hold

    static let sceneKeys = ["size", "background", "font", "fonts", "data", "data_sources", "pages", "widgets"] + scheduleSceneKeys
    static let pageKeys = ["name", "duration", "transition", "widgets"] + schedulePageKeys
    static let transitionKeys = ["type", "duration", "easing"]
    static let styleKeys = ["background", "foreground", "corner_radius", "border", "opacity", "font"]
    static let commonWidgetKeys = ["id", "type", "x", "y", "width", "height", "grow", "on_change", "on_press"] + styleKeys
    static let typeKeys: [WidgetType: [String]] = [
        .rect: [], .panel: [], .fps: [],
        .text: ["text", "markup", "wrap", "ellipsize", "align", "max_lines", "shrink_to_fit"],
        .image: ["path", "fit", "plane", "refresh"],
        .clock: ["format", "timezone"],
        .ticker: ["text", "speed"],
        .progress: ["value"],
        .qrcode: ["text"],
        .sparkline: ["bind", "capacity"],
        .button: ["label", "states", "disabled", "enabled"],
        .video: videoKeys,
        .web: webKeys,
        .row: ["spacing", "padding", "align", "children"],
        .column: ["spacing", "padding", "align", "children"],
        .stack: ["children"],
    ]

    // MARK: Structure

    func scene(_ root: Node) -> Scene? {
        guard let f = fields(root, "", allowed: Self.sceneKeys, expected: "a mapping with 'pages' (or 'widgets')") else { return nil }
        var size = SceneSize.display
        if let v = f["size"]?.value { size = sceneSize(v, "size") ?? .display }
        var background: Fill?
        var backgroundImage: ImageProperties?
        if let b = f["background"] { (background, backgroundImage) = sceneBackground(b.value, "background") }
        let font = f["font"].flatMap { self.font($0.value, "font") } ?? Font(family: Font.defaultFamily, size: 24, weight: .normal)
        var data: [String: String] = [:]
        if let v = f["data"]?.value, let d = fields(v, "data", allowed: [], expected: "a mapping of binding keys to values", any: true) {
            for (key, entry) in d {
                let path = Self.child("data", key)
                guard Template.isValidKey(key) else { error(entry.key, path, "'\(key)' is not a binding key"); continue }
                guard let scalar = entry.value.scalar else { error(entry.value, path, "expected a string or number"); continue }
                data[key] = scalar.string
            }
        }
        var pages: [Page] = []
        switch (f["pages"], f["widgets"]) {
        case let (p?, w?):
            error(w.key, "widgets", "give 'pages' or top-level 'widgets' (one page), not both")
            pages = self.pages(p.value, "pages")
        case let (p?, nil):
            pages = self.pages(p.value, "pages")
        case let (nil, w?):
            // A one-page scene needs no page list.
            pages = [Page(name: "main", duration: nil, transition: .cut, widgets: widgets(w.value, "widgets", depth: 1),
                          location: location(root))]
        case (nil, nil):
            error(root, "", "the scene has no 'pages' (or 'widgets')")
        }
        checkPageReferences(pages)
        var scene = Scene(size: size, background: background, font: font, data: data, pages: pages)
        scene.backgroundImage = backgroundImage
        if let v = f["fonts"]?.value { scene.fonts = fontFiles(v, "fonts") }
        if let v = f["data_sources"]?.value { scene.dataSources = dataSources(v, "data_sources", http: &scene.httpDataSources) }
        sceneSchedule(of: &scene, f)
        return scene
    }

    /// `fields` for mappings whose keys are the caller's (data keys): no key is unknown.
    func fields(_ node: Node, _ path: String, allowed: [String], expected: String, any: Bool) -> [String: (key: Node, value: Node)]? {
        guard any else { return fields(node, path, allowed: allowed, expected: expected) }
        guard let mapping = node.mapping else { error(node, path, "expected \(expected)"); return nil }
        var result: [String: (key: Node, value: Node)] = [:]
        for (k, v) in mapping {
            guard let key = k.scalar?.string else { error(k, path, "keys must be plain strings"); continue }
            result[key] = (k, v)
        }
        return result
    }

    func sceneSize(_ node: Node, _ path: String) -> SceneSize? {
        if let s = node.scalar?.string {
            if s == "display" { return .display }
            let parts = s.split(separator: "x").compactMap { Int($0) }
            if parts.count == 2, parts.allSatisfy({ (1...16384).contains($0) }) { return .fixed(width: parts[0], height: parts[1]) }
        }
        error(node, path, "expected 'display' (follow the display mode) or WIDTHxHEIGHT, e.g. 1920x1080")
        return nil
    }

    func pages(_ node: Node, _ path: String) -> [Page] {
        guard let sequence = node.sequence else { error(node, path, "expected a list of pages"); return [] }
        if sequence.isEmpty { error(node, path, "a scene needs at least one page") }
        var names: [String: SourceLocation] = [:]
        var pages: [Page] = []
        for (index, pageNode) in sequence.enumerated() {
            let p = "\(path)[\(index)]"
            guard let f = fields(pageNode, p, allowed: Self.pageKeys, expected: "a page (a mapping with 'widgets')") else { continue }
            var name = "page\(index + 1)"
            if let n = f["name"] {
                if let s = string(n.value, Self.child(p, "name")) {
                    if let first = names[s] {
                        error(n.value, Self.child(p, "name"), "duplicate page name '\(s)' (first used at \(first))")
                    } else {
                        names[s] = location(n.value)
                    }
                    name = s
                }
            }
            let advancesAfterVideo = f["duration"]?.value.scalar?.string == "video"
            let duration = advancesAfterVideo ? nil : f["duration"].flatMap { pageDuration($0.value, Self.child(p, "duration")) }
            let transition = f["transition"].flatMap { self.transition($0.value, Self.child(p, "transition")) } ?? .cut
            var widgets: [Widget] = []
            if let w = f["widgets"] { widgets = self.widgets(w.value, Self.child(p, "widgets"), depth: 1) } else { error(pageNode, p, "a page needs 'widgets'") }
            var page = Page(name: name, duration: duration, transition: transition, widgets: widgets, location: location(pageNode))
            page.advancesAfterVideo = advancesAfterVideo
            schedule(of: &page, f, p)
            if advancesAfterVideo { checkHasVideo(page, node: f["duration"]!.value, path: Self.child(p, "duration")) }
            pages.append(page)
        }
        return pages
    }

    func transition(_ node: Node, _ path: String) -> Transition? {
        // `transition: fade` is shorthand for the default duration and easing.
        if node.scalar != nil {
            guard let kind = choice(node, path, Transition.Kind.self) else { return nil }
            return kind == .cut ? .cut : Transition(kind: kind, duration: 0.5, easing: .easeInOut)
        }
        guard let f = fields(node, path, allowed: Self.transitionKeys, expected: "a transition name or a mapping with 'type'") else { return nil }
        guard let t = f["type"] else { error(node, path, "a transition needs 'type' (\(Transition.Kind.allCases.map(\.rawValue).joined(separator: ", ")))"); return nil }
        guard let kind = choice(t.value, Self.child(path, "type"), Transition.Kind.self) else { return nil }
        let defaultDuration: Double? = kind == .cut ? 0 : 0.5
        let duration = f["duration"].map { number($0.value, Self.child(path, "duration"), in: 0...60) } ?? defaultDuration
        let easing = f["easing"].map { self.easing($0.value, Self.child(path, "easing")) } ?? .easeInOut
        guard let duration, let easing else { return nil }
        return Transition(kind: kind, duration: duration, easing: easing)
    }

    func easing(_ node: Node, _ path: String) -> Easing? {
        guard let s = string(node, path) else { return nil }
        if let e = Easing.names[s] { return e }
        if s.hasPrefix("cubic-bezier(") && s.hasSuffix(")") {
            let numbers = s.dropFirst("cubic-bezier(".count).dropLast().split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            // x1 and x2 must stay in 0...1 for the curve to be a function of time, as in CSS.
            if numbers.count == 4, (0...1).contains(numbers[0]), (0...1).contains(numbers[2]) {
                return .cubicBezier(numbers[0], numbers[1], numbers[2], numbers[3])
            }
        }
        error(node, path, "'\(s)' is not an easing (linear, ease-in, ease-out, ease-in-out, cubic-bezier(x1, y1, x2, y2) with x1, x2 in 0...1)")
        return nil
    }

    // MARK: Widgets

    func widgets(_ node: Node, _ path: String, depth: Int) -> [Widget] {
        guard let sequence = node.sequence else { error(node, path, "expected a list of widgets"); return [] }
        return sequence.enumerated().compactMap { widget($0.element, "\(path)[\($0.offset)]", depth: depth) }
    }

    func widget(_ node: Node, _ path: String, depth: Int) -> Widget? {
        guard let mapping = node.mapping else { error(node, path, "expected a widget (a mapping with 'type')"); return nil }
        guard depth <= limits.maximumDepth else {
            error(node, path, "widgets nest deeper than \(limits.maximumDepth) levels")
            return nil
        }
        widgetCount += 1
        if widgetCount == limits.maximumWidgets + 1 {
            error(node, path, "more than \(limits.maximumWidgets) widgets in the scene")
        }
        // The id is checked before the type so that a duplicate is still caught on a widget whose type is wrong.
        var id: String?
        if let idNode = mapping["id"], let s = string(idNode, Self.child(path, "id")) {
            if let first = ids[s] {
                error(idNode, Self.child(path, "id"), "duplicate id '\(s)' (first used at \(first))")
            } else {
                ids[s] = location(idNode)
            }
            id = s
        }
        guard let typeNode = mapping["type"] else { error(node, path, "a widget needs 'type'"); return nil }
        let typePath = Self.child(path, "type")
        guard let typeName = typeNode.scalar?.string else { error(typeNode, typePath, "expected a widget type name"); return nil }
        guard let type = WidgetType(rawValue: typeName) else {
            let hint = Suggestion.nearest(to: typeName, in: WidgetType.allCases.map(\.rawValue)).map { "did you mean '\($0)'? " } ?? ""
            error(typeNode, typePath, "unknown widget type '\(typeName)'; \(hint)known types: \(WidgetType.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        guard let f = fields(node, path, allowed: Self.commonWidgetKeys + Self.typeKeys[type, default: []], expected: "a widget") else { return nil }
        func key(_ k: String) -> String { Self.child(path, k) }

        let frame = Frame(x: f["x"].flatMap { length($0.value, key("x"), signed: true) },
                          y: f["y"].flatMap { length($0.value, key("y"), signed: true) },
                          width: f["width"].flatMap { length($0.value, key("width"), signed: false) },
                          height: f["height"].flatMap { length($0.value, key("height"), signed: false) })
        let grow = f["grow"].flatMap { number($0.value, key("grow"), in: 0...1000) } ?? 0
        let style = self.style(f, path)
        let onChange = f["on_change"].flatMap { choice($0.value, key("on_change"), ChangeAnimation.self) }

        func required(_ k: String) -> Node? {
            if let v = f[k]?.value { return v }
            error(node, path, "\(type == .image ? "an" : "a") \(type.rawValue) widget needs '\(k)'")
            return nil
        }
        func template(_ k: String) -> Template? { required(k).flatMap { self.template($0, key(k)) } }

        let content: WidgetContent?
        switch type {
        case .rect: content = .rect
        case .panel: content = .panel
        case .fps: content = .fps
        case .text:
            let text = template("text")
            let markup = f["markup"].map { bool($0.value, key("markup")) } ?? false
            let wrap = f["wrap"].map { choice($0.value, key("wrap"), TextProperties.Wrap.self) } ?? .word
            let ellipsize = f["ellipsize"].map { choice($0.value, key("ellipsize"), TextProperties.Ellipsize.self) } ?? TextProperties.Ellipsize.none
            let align = f["align"].map { choice($0.value, key("align"), TextProperties.Alignment.self) } ?? .left
            let maxLinesGiven = f["max_lines"].map { integer($0.value, key("max_lines"), in: 1...1000) }
            let maxLines = maxLinesGiven ?? nil
            let shrink = f["shrink_to_fit"].map { bool($0.value, key("shrink_to_fit")) } ?? false
            if let text, let markup, let wrap, let ellipsize, let align, let shrink, maxLinesGiven.map({ $0 != nil }) ?? true {
                content = .text(TextProperties(text: text, markup: markup, wrap: wrap, ellipsize: ellipsize, align: align,
                                               maxLines: maxLines, shrinkToFit: shrink))
            } else { content = nil }
        case .image:
            let fit = f["fit"].map { choice($0.value, key("fit"), ImageProperties.Fit.self) } ?? .contain
            let path = required("path").flatMap { imagePath($0, key("path")) }
            let plane = f["plane"].map { bool($0.value, key("plane")) } ?? false
            var refresh: Int? = ImageProperties.defaultRefreshSeconds
            if let r = f["refresh"] {
                refresh = integer(r.value, key("refresh"), in: ImageProperties.refreshRange)
                if let path, refresh != nil, !RemoteAsset.looksRemote(path) {
                    error(r.key, key("refresh"), "'refresh' is for an image named by URL; a file is read when the scene loads")
                    refresh = nil
                }
            }
            if let path, let fit, let plane, let refresh {
                content = .image(ImageProperties(path: path, fit: fit, plane: plane, refreshSeconds: refresh))
            } else { content = nil }
        case .clock:
            let format = f["format"].map { string($0.value, key("format")) } ?? "%H:%M"
            var timezone: String?
            var timezoneValid = true
            if let t = f["timezone"]?.value {
                timezone = string(t, key("timezone"))
                if let zone = timezone, TimeZone(identifier: zone) == nil {
                    error(t, key("timezone"), "unknown time zone '\(zone)' (expected an IANA name such as Europe/Berlin)")
                }
                timezoneValid = timezone.map { TimeZone(identifier: $0) != nil } ?? false
            }
            if let format, timezoneValid { content = .clock(ClockProperties(format: format, timezone: timezone)) } else { content = nil }
        case .ticker:
            let text = template("text")
            let speed = f["speed"].map { number($0.value, key("speed"), in: 1...10_000) } ?? 60
            if let text, let speed { content = .ticker(TickerProperties(text: text, speed: speed)) } else { content = nil }
        case .progress:
            content = required("value").flatMap { numberSource($0, key("value"), in: 0...1) }.map { .progress(ProgressProperties(value: $0)) }
        case .qrcode:
            content = template("text").map { .qrcode(QRCodeProperties(text: $0)) }
        case .sparkline:
            let bind = required("bind").flatMap { bindingKey($0, key("bind")) }
            let capacity = f["capacity"].map { integer($0.value, key("capacity"), in: 2...10_000) } ?? 60
            if let bind, let capacity { content = .sparkline(SparklineProperties(bind: bind, capacity: capacity)) } else { content = nil }
        case .button:
            let label = template("label")
            let enabled = buttonEnabled(f, key)
            let states = f["states"].map { buttonStates($0.value, key("states")) } ?? [:]
            if let label, let enabled, let states { content = .button(ButtonProperties(label: label, states: states, enabled: enabled)) } else { content = nil }
        case .video:
            content = video(f, node: node, path: path).map(WidgetContent.video)
        case .web:
            content = web(f, node: node, path: path).map(WidgetContent.web)
        case .row, .column:
            let spacing = f["spacing"].map { number($0.value, key("spacing"), in: 0...10_000) } ?? 0
            let padding = f["padding"].map { number($0.value, key("padding"), in: 0...10_000) } ?? 0
            let align = f["align"].map { choice($0.value, key("align"), ContainerProperties.Alignment.self) } ?? .stretch
            let children = f["children"].map { widgets($0.value, key("children"), depth: depth + 1) } ?? []
            if let spacing, let padding, let align {
                let c = ContainerProperties(spacing: spacing, padding: padding, align: align, children: children)
                content = type == .row ? .row(c) : .column(c)
            } else { content = nil }
        case .stack:
            content = .stack(children: f["children"].map { widgets($0.value, key("children"), depth: depth + 1) } ?? [])
        }
        let onPress = f["on_press"].flatMap { pressAction($0.value, key("on_press")) }
        guard let content, f["on_press"] == nil || onPress != nil else { return nil }
        return Widget(id: id, content: content, frame: frame, grow: grow, style: style, onChange: onChange, location: location(node),
                      onPress: onPress)
    }

    /// Whether a button takes presses: `disabled: true` turns it off; `enabled: false` says the same and stays
    /// accepted. Giving both is an error: they could disagree. nil after an error.
    func buttonEnabled(_ f: [String: (key: Node, value: Node)], _ key: (String) -> String) -> Bool? {
        if f["disabled"] != nil, let enabled = f["enabled"] {
            error(enabled.key, key("enabled"), "give 'disabled' or 'enabled', not both")
            return nil
        }
        if let disabled = f["disabled"] { return bool(disabled.value, key("disabled")).map { !$0 } }
        return f["enabled"].map { bool($0.value, key("enabled")) } ?? true
    }

    func buttonStates(_ node: Node, _ path: String) -> [ButtonProperties.State: Style]? {
        let names = ButtonProperties.State.allCases.map(\.rawValue)
        guard let f = fields(node, path, allowed: names, expected: "a mapping of states (\(names.joined(separator: ", "))) to styles") else { return nil }
        var states: [ButtonProperties.State: Style] = [:]
        for (name, entry) in f {
            let p = Self.child(path, name)
            guard let s = fields(entry.value, p, allowed: Self.styleKeys, expected: "a style mapping") else { continue }
            states[ButtonProperties.State(rawValue: name)!] = style(s, p)
        }
        return states
    }

    func style(_ f: [String: (key: Node, value: Node)], _ path: String) -> Style {
        func key(_ k: String) -> String { Self.child(path, k) }
        return Style(background: f["background"].flatMap { fill($0.value, key("background")) },
                     foreground: f["foreground"].flatMap { colour($0.value, key("foreground")) },
                     cornerRadius: f["corner_radius"].flatMap { number($0.value, key("corner_radius"), in: 0...10_000) },
                     border: f["border"].flatMap { border($0.value, key("border")) },
                     opacity: f["opacity"].flatMap { number($0.value, key("opacity"), in: 0...1) },
                     font: f["font"].flatMap { font($0.value, key("font")) })
    }

    // MARK: Values

    /// At most this many `fonts:` entries.
    static let maximumFontFiles = 16

    /// `fonts:`: a list of font files (relative to the scene, absolute, or URLs). A file must be there and start
    /// as a TrueType, OpenType or WOFF font does; a URL's copy is checked when it arrives.
    func fontFiles(_ node: Node, _ path: String) -> [String] {
        guard let list = node.sequence else {
            error(node, path, "expected a list of font files or URLs, as in [fonts/Brand-Bold.ttf, \"https://cdn.example/Brand.otf\"]")
            return []
        }
        if list.count > Self.maximumFontFiles { error(node, path, "\(list.count) font files: at most \(Self.maximumFontFiles)") }
        var files: [String] = []
        for (offset, entry) in list.enumerated() {
            let itemPath = "\(path)[\(offset)]"
            guard var name = string(entry, itemPath) else { continue }
            switch resolvedAgainstSceneURL(name) {
            case .failure(let problem)?: error(entry, itemPath, problem.message); continue
            case .success(let url)?: name = url
            case nil: break
            }
            if RemoteAsset.looksRemote(name) {
                if let problem = RemoteAsset.problem(with: name, kind: "font") { error(entry, itemPath, problem) } else { files.append(name) }
                continue
            }
            let resolved = name.hasPrefix("/") ? name : PathNames.normalized(baseDirectory + "/" + name)
            if let problem = FontFileCheck.problem(at: resolved, named: name) { error(entry, itemPath, problem) } else { files.append(resolved) }
        }
        return files
    }

    static let backgroundImageKeys = ["image", "fit", "colour", "refresh"]
    static let backgroundImageExample = "{image: lobby.jpg, fit: cover, colour: black}"

    /// The scene's `background`: a fill, or `{image: FILE-or-URL, fit, colour, refresh}`, a picture over the whole
    /// scene (`fit` cover by default) on `colour` (black by default).
    func sceneBackground(_ node: Node, _ path: String) -> (Fill?, ImageProperties?) {
        guard let mapping = node.mapping, mapping.keys.contains(where: { $0.string == "image" }) else { return (fill(node, path), nil) }
        guard let f = fields(node, path, allowed: Self.backgroundImageKeys, expected: Self.backgroundImageExample) else { return (nil, nil) }
        func key(_ k: String) -> String { Self.child(path, k) }
        let image = f["image"].flatMap { imagePath($0.value, key("image")) }
        let fit = f["fit"].map { choice($0.value, key("fit"), ImageProperties.Fit.self) } ?? .cover
        let colour = f["colour"].map { self.colour($0.value, key("colour")) } ?? Color(rgb: 0x000000)
        var refresh: Int? = ImageProperties.defaultRefreshSeconds
        if let r = f["refresh"] {
            refresh = integer(r.value, key("refresh"), in: ImageProperties.refreshRange)
            if let image, refresh != nil, !RemoteAsset.looksRemote(image) {
                error(r.key, key("refresh"), "'refresh' is for an image named by URL; a file is read when the scene loads")
                refresh = nil
            }
        }
        guard let image, let fit, let colour, let refresh else { return (nil, nil) }
        return (.colour(colour), ImageProperties(path: image, fit: fit, refreshSeconds: refresh))
    }

    func fill(_ node: Node, _ path: String) -> Fill? {
        if node.scalar != nil { return colour(node, path).map(Fill.colour) }
        if let mapping = node.mapping, mapping.keys.contains(where: { $0.string == "image" }) {
            error(node, path, "an image background is for the whole scene (its top-level 'background'); for a widget, put an image widget under it")
            return nil
        }
        guard let f = fields(node, path, allowed: ["gradient", "angle"], expected: "a colour or a mapping with 'gradient'") else { return nil }
        guard let g = f["gradient"] else { error(node, path, "a gradient background needs 'gradient' (a list of colours)"); return nil }
        let gp = Self.child(path, "gradient")
        guard let list = g.value.sequence else { error(g.value, gp, "expected a list of at least two colours"); return nil }
        let colours = list.enumerated().map { colour($0.element, "\(gp)[\($0.offset)]") }
        if list.count < 2 { error(g.value, gp, "a gradient needs at least two colours") }
        let angle = f["angle"].map { number($0.value, Self.child(path, "angle"), in: -360...360) } ?? 90
        guard list.count >= 2, let angle else { return nil }
        let valid = colours.compactMap { $0 }
        guard valid.count == colours.count else { return nil }
        return .linearGradient(colours: valid, angle: angle)
    }

    func colour(_ node: Node, _ path: String) -> Color? {
        guard let s = node.scalar?.string else { error(node, path, "expected a colour"); return nil }
        if let c = Color(parsing: s) { return c }
        error(node, path, "'\(s)' is not a colour (#RGB, #RRGGBB, #RRGGBBAA or one of \(Color.named.keys.sorted().joined(separator: ", ")))")
        return nil
    }

    func border(_ node: Node, _ path: String) -> Border? {
        guard let f = fields(node, path, allowed: ["width", "colour"], expected: "a mapping with 'width' and 'colour'") else { return nil }
        let width = f["width"].map { number($0.value, Self.child(path, "width"), in: 0...1000) } ?? 1
        let colour = f["colour"].map { self.colour($0.value, Self.child(path, "colour")) } ?? Color(rgb: 0xFFFFFF)
        guard let width, let colour else { return nil }
        return Border(width: width, colour: colour)
    }

    func font(_ node: Node, _ path: String) -> Font? {
        guard let f = fields(node, path, allowed: ["family", "size", "weight"], expected: "a mapping with 'family', 'size', 'weight'") else { return nil }
        var font = Font()
        if let fam = f["family"], let s = string(fam.value, Self.child(path, "family")) {
            font.family = s
            fontFamilies.append(FontUse(family: s, location: location(fam.value), path: Self.child(path, "family")))
        }
        font.size = f["size"].flatMap { number($0.value, Self.child(path, "size"), in: 1...2000) }
        font.weight = f["weight"].flatMap { choice($0.value, Self.child(path, "weight"), FontWeight.self) }
        return font
    }

    /// Pixels (`120`, `"120px"`) or percent of the parent (`"50%"`); positions may be negative pixels.
    func length(_ node: Node, _ path: String, signed: Bool) -> Length? {
        if isNumber(node), let v = YAMLTree.double(node) {
            if !signed && v < 0 { error(node, path, "\(format(v)) is negative; a size must be 0 or more"); return nil }
            return .pixels(v)
        }
        if let s = node.scalar?.string {
            if s.hasSuffix("%"), let v = Double(s.dropLast()) {
                guard (0...100).contains(v) else { error(node, path, "percentage \(s) is out of range 0%...100%"); return nil }
                return .percent(v)
            }
            if s.hasSuffix("px"), let v = Double(s.dropLast(2)), signed || v >= 0 { return .pixels(v) }
        }
        error(node, path, "expected a length: pixels (120) or percent of the parent ('50%')")
        return nil
    }

    func numberSource(_ node: Node, _ path: String, in range: ClosedRange<Double>) -> NumberSource? {
        if node.mapping != nil {
            guard let f = fields(node, path, allowed: ["bind", "min", "max"], expected: "a binding") else { return nil }
            guard let b = f["bind"] else { error(node, path, "a bound value needs 'bind: KEY'"); return nil }
            let key = bindingKey(b.value, Self.child(path, "bind"))
            let min = f["min"].map { number($0.value, Self.child(path, "min")) } ?? range.lowerBound
            let max = f["max"].map { number($0.value, Self.child(path, "max")) } ?? range.upperBound
            guard let key, let min, let max else { return nil }
            guard min < max else { error(f["max"]?.value ?? node, path, "min (\(format(min))) must be less than max (\(format(max)))"); return nil }
            return .bound(key: key, min: min, max: max)
        }
        if node.scalar?.string.hasPrefix("{") == true {
            error(node, path, "expected a number or {bind: KEY}")
            return nil
        }
        guard isNumber(node) else { error(node, path, "expected a number (\(format(range.lowerBound))...\(format(range.upperBound))) or {bind: KEY}"); return nil }
        return number(node, path, in: range).map(NumberSource.constant)
    }

    func bindingKey(_ node: Node, _ path: String) -> String? {
        guard let s = string(node, path) else { return nil }
        guard Template.isValidKey(s) else {
            error(node, path, "'\(s)' is not a binding key (letters, digits, '_', '.', '-'; starting with a letter or '_')")
            return nil
        }
        return s
    }

    func template(_ node: Node, _ path: String) -> Template? {
        guard let s = string(node, path) else { return nil }
        do { return try Template(parsing: s) } catch {
            self.error(node, path, error.message)
            return nil
        }
    }

    /// In a scene fetched by URL (`baseDirectory` is then the scene's URL): a relative name resolved against the
    /// scene's URL, as a browser resolves a page's links (`logo.png` beside `https://host/screens/lobby.yaml` is
    /// `https://host/screens/logo.png`), or `.failure` naming why it cannot be. Nil for a scene read from a file,
    /// and for an absolute path or a URL, which stay as written.
    func resolvedAgainstSceneURL(_ name: String) -> Result<String, SceneURLProblem>? {
        guard RemoteAsset.isFetched(baseDirectory), !name.hasPrefix("/"), !RemoteAsset.looksRemote(name) else { return nil }
        guard let base = URL(string: baseDirectory),
              let escaped = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.union(CharacterSet(charactersIn: "?#%"))),
              let resolved = URL(string: escaped, relativeTo: base)?.absoluteURL.absoluteString else {
            return .failure(SceneURLProblem(message: "'\(name)' cannot be resolved against the scene's URL \(baseDirectory)"))
        }
        return .success(resolved)
    }

    struct SceneURLProblem: Error {
        var message: String
    }

    /// An image file (relative to the scene's folder), or a URL. With `remote` false (a video's placeholder, shown
    /// the moment a clip fails) it must be a file on the board: in a scene fetched by URL, an absolute path.
    func imagePath(_ node: Node, _ path: String, remote: Bool = true) -> String? {
        guard var name = string(node, path) else { return nil }
        switch resolvedAgainstSceneURL(name) {
        case .failure(let problem)?:
            error(node, path, problem.message)
            return nil
        case .success(let url)?:
            guard remote else {
                error(node, path, "in a scene fetched by URL, '\(name)' would name \(url); this must be a file on the board: give its absolute path")
                return nil
            }
            name = url
        case nil: break
        }
        if RemoteAsset.looksRemote(name) {
            if let problem = RemoteAsset.problem(with: name) {
                error(node, path, problem)
                return nil
            }
            return name
        }
        let resolved = name.hasPrefix("/") ? name : PathNames.normalized(baseDirectory + "/" + name)
        if let problem = ImageFileCheck.problem(at: resolved, named: name, maximumPixels: limits.maximumImagePixels) {
            error(node, path, problem)
            return nil
        }
        return resolved
    }

}
