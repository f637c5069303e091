import Foundation
import KioskCore
import KioskScene

/// `widget.get` and `widget.set`: a widget's properties under the names the scene file uses. Stateless; main
/// thread (it reads and changes nodes).
enum WidgetProperties {
    /// A checked `widget.set`: every property was valid, so applying cannot fail half-way.
    struct Change {
        var edits: [(WidgetNode) -> Void] = []
        var movesWidget = false
        /// An image file the change shows (`path`), checked by `ImageFileCheck` off the main loop before the change
        /// is applied: `path` resolved, `name` as given.
        var imageToCheck: (path: String, name: String)?

        func apply(to node: WidgetNode) { for edit in edits { edit(node) } }
    }

    static let common = ["x", "y", "width", "height", "opacity", "hidden", "foreground", "background", "corner_radius"]

    static func settable(_ type: WidgetType) -> [String] {
        let own: [String] = switch type {
        case .text: ["text", "align"]
        case .ticker: ["text", "speed"]
        case .qrcode: ["text"]
        case .button: ["label", "disabled", "enabled", "state"]
        case .image: ["path", "fit"]
        case .clock: ["format", "timezone"]
        case .progress: ["value"]
        case .sparkline: ["values"]
        case .row, .column: ["spacing", "padding"]
        case .rect, .panel, .fps, .stack, .video, .web: []
        }
        return common + own
    }

    static func describe(_ node: WidgetNode, values: [String: String]) -> [String: PropertyValue] {
        let w = node.widget
        let f = node.layer.frame
        var p: [String: PropertyValue] = [
            "type": .string(w.type.rawValue),
            "page": .string(node.page),
            "frame": .object(["x": .number(Double(f.x)), "y": .number(Double(f.y)),
                              "width": .number(Double(f.width)), "height": .number(Double(f.height))]),
            "opacity": .number(w.style.opacity ?? 1),
            "hidden": .bool(node.isHidden),
        ]
        if let id = w.id { p["id"] = .string(id) }
        if let c = w.style.foreground { p["foreground"] = .string(StyleMapping.hex(c)) }
        if case .colour(let c)? = w.style.background { p["background"] = .string(StyleMapping.hex(c)) }
        if let r = w.style.cornerRadius { p["corner_radius"] = .number(r) }
        switch w.content {
        case .text(let t):
            p["text"] = .string(source(of: t.text))
            p["shown_text"] = .string(t.text.render(values, placeholder: SceneBuilder.placeholder))
            p["align"] = .string(t.align.rawValue)
        case .ticker(let t):
            p["text"] = .string(source(of: t.text))
            p["speed"] = .number(t.speed)
        case .qrcode(let q): p["text"] = .string(source(of: q.text))
        case .button(let b):
            p["label"] = .string(source(of: b.label))
            p["enabled"] = .bool(b.enabled)
            p["disabled"] = .bool(!b.enabled)
            p["state"] = .string(!b.enabled ? "disabled" : node.isPressedDown ? "pressed" : node.buttonState.rawValue)
        case .image(let i):
            p["path"] = .string(i.path)
            p["fit"] = .string(i.fit.rawValue)
        case .clock(let c):
            p["format"] = .string(c.format)
            p["timezone"] = c.timezone.map { .string($0) } ?? .null
            p["shown_text"] = .string(node.clockText)
        case .progress(let pr):
            switch pr.value {
            case .constant(let v): p["value"] = .number(v)
            case .bound(let key, let lo, let hi):
                p["value"] = .object(["bind": .string(key), "min": .number(lo), "max": .number(hi)])
            }
            p["shown_value"] = .number(node.progressShown)
        case .sparkline(let s):
            p["bind"] = .string(s.bind)
            p["capacity"] = .number(Double(s.capacity))
            p["values"] = .array(node.series.map { .number($0) })
        case .row(let c), .column(let c):
            p["spacing"] = .number(c.spacing)
            p["padding"] = .number(c.padding)
            p["children"] = .number(Double(c.children.count))
        case .stack(let children):
            p["children"] = .number(Double(children.count))
        case .web(let w):
            p["url"] = .string(w.url)
            p["zoom"] = .number(w.zoom)
        case .video(let v):
            p["playlist"] = .array(v.sources.map(PropertyValue.string))
            p["loop"] = .bool(v.loop)
            p["fit"] = .string(v.fit.rawValue)
            p["muted"] = .bool(v.muted)
            p["volume"] = .number(v.volume)
        case .rect, .panel, .fps:
            break
        }
        return p
    }

    /// The template as a scene file writes it.
    static func source(of template: Template) -> String {
        template.parts.map {
            switch $0 {
            case .literal(let s): s.replacingOccurrences(of: "{", with: "{{").replacingOccurrences(of: "}", with: "}}")
            case .key(let k): "{\(k)}"
            }
        }.joined()
    }

    /// Checks every property but the image file a `path` names, which the caller checks off the main loop
    /// (`Change.imageToCheck`).
    static func parse(_ properties: [String: PropertyValue], for node: WidgetNode, baseDirectory: String) throws(StageError) -> Change {
        let type = node.widget.type
        let allowed = settable(type)
        var change = Change()
        guard !properties.isEmpty else { throw StageError(.invalidArgument, "props: give at least one property") }
        if properties["disabled"] != nil, properties["enabled"] != nil {
            throw StageError(.invalidArgument, "props.enabled: give 'disabled' or 'enabled', not both")
        }
        for (name, value) in properties.sorted(by: { $0.key < $1.key }) {
            guard allowed.contains(name) else {
                throw StageError(.invalidArgument, "props.\(name): a \(type.rawValue) widget has no settable property '\(name)' (settable: \(allowed.joined(separator: ", ")))")
            }
            func bad(_ expected: String) -> StageError {
                StageError(.invalidArgument, "props.\(name): expected \(expected), got \(describe(value))")
            }
            switch name {
            case "x", "y", "width", "height":
                guard let length = length(value) else { throw bad("pixels (a number) or a percentage such as \"50%\"") }
                if name != "x" && name != "y", case .pixels(let px) = length, px < 0 { throw bad("a size of at least 0") }
                change.movesWidget = true
                change.edits.append { node in
                    switch name {
                    case "x": node.widget.frame.x = length
                    case "y": node.widget.frame.y = length
                    case "width": node.widget.frame.width = length
                    default: node.widget.frame.height = length
                    }
                }
            case "opacity":
                guard case .number(let v) = value, (0...1).contains(v) else { throw bad("a number from 0 to 1") }
                change.edits.append { $0.widget.style.opacity = v }
            case "hidden":
                guard case .bool(let v) = value else { throw bad("true or false") }
                change.edits.append { $0.isHidden = v }
            case "foreground", "background":
                guard case .string(let s) = value, let colour = Color(parsing: s) else { throw bad("a colour (#RGB, #RRGGBB, #RRGGBBAA or a name)") }
                change.edits.append { node in
                    if name == "foreground" { node.widget.style.foreground = colour } else { node.widget.style.background = .colour(colour) }
                }
            case "corner_radius":
                guard case .number(let v) = value, v >= 0 else { throw bad("a number of at least 0") }
                change.edits.append { $0.widget.style.cornerRadius = v }
            case "text", "label":
                guard case .string(let s) = value else { throw bad("a string") }
                let template: Template
                do { template = try Template(parsing: s) } catch { throw bad("a text with valid {key} bindings (\(error.message))") }
                change.movesWidget = true
                change.edits.append { node in
                    switch node.widget.content {
                    case .text(var t): t.text = template; node.widget.content = .text(t)
                    case .ticker(var t): t.text = template; node.widget.content = .ticker(t)
                    case .qrcode(var q): q.text = template; node.widget.content = .qrcode(q)
                    case .button(var b): b.label = template; node.widget.content = .button(b)
                    default: break
                    }
                }
            case "align":
                guard case .string(let s) = value, let a = TextProperties.Alignment(rawValue: s) else { throw bad("left, center or right") }
                change.edits.append { if case .text(var t) = $0.widget.content { t.align = a; $0.widget.content = .text(t) } }
            case "speed":
                guard case .number(let v) = value, v >= 0 else { throw bad("pixels per second (a number of at least 0)") }
                change.edits.append { if case .ticker(var t) = $0.widget.content { t.speed = v; $0.widget.content = .ticker(t) } }
            case "enabled", "disabled":
                guard case .bool(let v) = value else { throw bad("true or false") }
                let enabled = name == "enabled" ? v : !v
                change.edits.append { if case .button(var b) = $0.widget.content { b.enabled = enabled; $0.widget.content = .button(b) } }
            case "state":
                guard case .string(let s) = value, let state = ButtonProperties.State(rawValue: s) else { throw bad("normal, pressed or disabled") }
                change.edits.append { $0.buttonState = state }
            case "path":
                guard case .string(let s) = value, !s.isEmpty else { throw bad("an image path") }
                let path = s.hasPrefix("/") ? s : (baseDirectory as NSString).appendingPathComponent(s)
                change.imageToCheck = (path, s)
                change.edits.append { if case .image(var i) = $0.widget.content { i.path = path; $0.widget.content = .image(i) } }
            case "fit":
                guard case .string(let s) = value, let fit = ImageProperties.Fit(rawValue: s) else { throw bad("contain, cover, fill or none") }
                change.edits.append { if case .image(var i) = $0.widget.content { i.fit = fit; $0.widget.content = .image(i) } }
            case "format":
                guard case .string(let s) = value, !s.isEmpty else { throw bad("a strftime format") }
                change.edits.append { if case .clock(var c) = $0.widget.content { c.format = s; $0.widget.content = .clock(c) } }
            case "timezone":
                var zone: String?
                switch value {
                case .null: zone = nil
                case .string(let s) where TimeZone(identifier: s) != nil: zone = s
                default: throw bad("an IANA time zone name such as \"Europe/Paris\", or null")
                }
                change.edits.append { if case .clock(var c) = $0.widget.content { c.timezone = zone; $0.widget.content = .clock(c) } }
            case "value":
                guard case .number(let v) = value, (0...1).contains(v) else { throw bad("a number from 0 to 1") }
                change.edits.append { node in
                    if case .progress(var p) = node.widget.content { p.value = .constant(v); node.widget.content = .progress(p) }
                    node.progressShown = v
                }
            case "values":
                guard case .array(let items) = value else { throw bad("an array of numbers") }
                var numbers: [Double] = []
                for item in items {
                    guard case .number(let v) = item, v.isFinite else { throw bad("an array of numbers") }
                    numbers.append(v)
                }
                change.edits.append { node in
                    guard case .sparkline(let s) = node.widget.content else { return }
                    node.series = Array(numbers.suffix(s.capacity))
                }
            case "spacing", "padding":
                guard case .number(let v) = value, v >= 0 else { throw bad("pixels (a number of at least 0)") }
                change.movesWidget = true
                change.edits.append { node in
                    switch node.widget.content {
                    case .row(var c): if name == "spacing" { c.spacing = v } else { c.padding = v }; node.widget.content = .row(c)
                    case .column(var c): if name == "spacing" { c.spacing = v } else { c.padding = v }; node.widget.content = .column(c)
                    default: break
                    }
                }
            default:
                throw StageError(.invalidArgument, "props.\(name): not settable")
            }
        }
        return change
    }

    static func length(_ value: PropertyValue) -> Length? {
        switch value {
        case .number(let v) where v.isFinite: return .pixels(v)
        case .string(let s) where s.hasSuffix("%"):
            guard let v = Double(s.dropLast()), v.isFinite, v >= 0, v <= 1000 else { return nil }
            return .percent(v)
        default: return nil
        }
    }

    static func describe(_ value: PropertyValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): String(b)
        case .number(let n): String(n)
        case .string(let s): "\"\(s.prefix(40))\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
