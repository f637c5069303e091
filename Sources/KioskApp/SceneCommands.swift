import Foundation
import KioskControl
import KioskCore
import KioskRuntime
import KioskScene

/// The scene commands (`scene.load`, `scene.get`, `widget.get`, `widget.set`, `data.set`, `data.get`,
/// `page.show`, `animate`), through the outputs' scene runtimes: each but `data.set` takes `output` (the first
/// output's scene without it); data is the kiosk's and `data.set` reaches every output. The events they cause go out
/// through `ControlWiring.hookOutputs`.
extension ControlWiring {
    func registerSceneCommands() {
        let commands = server.commands

        commands.registerDeferred(.sceneLoad, arguments: ["path", "yaml", "base_directory", "url", "output"]) { [unowned self] args, _, reply in
            let stage = try self.stage(args)
            // Read, validated and laid out off the loop; the reply comes once the scene is being built. It replaces
            // the current one once completely rendered, which the `scene` event (kind loaded) announces.
            let answer = { (source: String) in { (result: Result<Void, StageError>) in
                switch result {
                case .success: reply.succeed(["source": .string(source), "status": "loading"])
                case .failure(let error): reply.fail(ControlError(code: error.code.rawValue, message: "scene.load: \(error.message)"))
                }
            } }
            let given = ["path", "yaml", "url"].filter { args.has($0) }
            if given.count > 1 {
                let named = given.map { "'\($0)'" }.joined(separator: " and ")
                throw ControlError.invalidArgument("scene.load: give one of 'path', 'yaml' or 'url', not \(given.count == 2 ? "both" : "all of") \(named)")
            }
            if args.has("url") {
                let url = try args.string("url")
                guard RemoteAsset.isFetched(url) else {
                    throw args.invalid("url", "must be an https:// or http:// URL, got '\(url.count > 200 ? String(url.prefix(200)) + "…" : url)'")
                }
                if let problem = RemoteAsset.problem(with: url, kind: "scene") { throw args.invalid("url", problem) }
                guard let remoteScenes else { throw ControlError(code: "unavailable", message: "scene.load: scenes by URL are not available") }
                remoteScenes.load(url, on: try self.drivenOutput(args).stage, then: answer(url))
                return
            }
            switch (args.has("path"), args.has("yaml")) {
            case (true, true):
                throw ControlError.invalidArgument("scene.load: give 'path' or 'yaml', not both")
            case (false, false):
                throw ControlError.invalidArgument("scene.load: missing 'path', 'yaml' or 'url'")
            case (true, false):
                let path = try args.string("path")
                guard path.hasPrefix("/") else { throw args.invalid("path", "must be an absolute path, got '\(path)'") }
                stage.loadScene(path: path, then: answer(path))
            case (false, true):
                let yaml = try args.string("yaml")
                var base = FileManager.default.currentDirectoryPath
                if args.has("base_directory") {
                    base = try args.string("base_directory")
                    guard base.hasPrefix("/") else { throw args.invalid("base_directory", "must be an absolute path, got '\(base)'") }
                }
                stage.loadScene(yaml: yaml, baseDirectory: base, then: answer("inline"))
            }
        }

        commands.register(.sceneGet, arguments: ["output"]) { [unowned self] args, _ in
            Self.json(try stage(args).sceneDescription)
        }

        commands.register(.widgetGet, arguments: ["id", "output"]) { [unowned self] args, _ in
            let stage = try self.stage(args)
            let id = try args.string("id")
            return try widgetValue(stage, id: id, args)
        }

        // Answered once applied: at once, or after an image file was checked off the loop.
        commands.registerDeferred(.widgetSet, arguments: ["id", "props", "output"]) { [unowned self] args, _, reply in
            let stage = try self.stage(args)
            let id = try args.string("id")
            let props = try args.object("props")
            guard !props.isEmpty else { throw args.invalid("props", "must name at least one property") }
            let properties = props.mapValues(Self.property)
            stage.setWidget(id: id, properties: properties) { [weak self] result in
                switch result {
                case .failure(let error):
                    reply.fail(ControlError(code: error.code.rawValue, message: "\(args.command): \(error.message)"))
                case .success:
                    guard let self else { return }
                    do throws(ControlError) { reply.succeed(try self.widgetValue(stage, id: id, args)) } catch { reply.fail(error) }
                }
            }
        }

        commands.register(.dataSet, arguments: ["values"]) { [unowned self] args, _ in
            let given = try args.object("values")
            var values: [String: String] = [:]
            for (key, value) in given {
                guard let text = Self.dataText(value) else {
                    throw ControlError.invalidArgument("data.set: 'values.\(key)' must be a string, number or boolean, got \(value.typeName)")
                }
                values[key] = text
            }
            // One call: the runtime shows every key's change in the same composed frame.
            if !values.isEmpty { try stageCall(args) { () throws(StageError) in try setDataEverywhere(values) } }
            return ["set": .int(Int64(values.count))]
        }

        commands.register(.dataGet, arguments: ["keys", "output"]) { [unowned self] args, _ in
            let stage = try self.stage(args)
            let keys = args.has("keys") ? try args.stringArray("keys") : nil
            return ["values": .object(stage.data(keys: keys).mapValues(JSONValue.string))]
        }

        commands.register(.pageShow, arguments: ["name", "transition", "output"]) { [unowned self] args, _ in
            let stage = try self.stage(args)
            let name = try args.string("name")
            let transition = args.has("transition") ? try Self.transition(try args.nested("transition", known: ["kind", "duration", "easing"])) : nil
            try stageCall(args) { () throws(StageError) in try stage.showPage(name, transition: transition) }
            return ["page": .string(name)]
        }

        let animateArguments: Set<String> = ["id", "property", "to", "kind", "duration", "easing", "stiffness", "damping", "mass",
                                             "velocity", "deceleration", "at", "output"]
        commands.register(.animate, arguments: animateArguments) { [unowned self] args, _ in
            let stage = try self.stage(args)
            let id = try args.string("id")
            let property = try args.string("property")
            let request = try Self.animation(args)
            let to: [Double]
            if case .decay = request {
                to = args.has("to") ? try args.numbers("to") : []
            } else {
                to = try args.numbers("to")
            }
            let at = args.has("at") ? try Self.epochNanoseconds(args, "at") : nil
            try stageCall(args) { () throws(StageError) in try stage.animate(id: id, property: property, to: to, request, at: at) }
            return ["id": .string(id), "property": .string(property)]
        }
    }

    // MARK: Events

    /// A scene event as subscribers get it (socket and MQTT alike): the event name and its data.
    static func eventMessage(_ event: StageEvent) -> (name: String, data: JSONValue) {
        switch event {
        case .sceneLoaded(let source, let pages):
            return ("scene", ["kind": "loaded", "source": .string(source), "pages": .array(pages.map(JSONValue.string))])
        case .pageShown(let name):
            return ("scene", ["kind": "page_shown", "page": .string(name)])
        case .dataChanged(let values):
            return ("data", ["values": .object(values.mapValues(JSONValue.string))])
        case .error(let code, let message):
            return ("error", ["code": .string(code), "message": .string(message)])
        case .video(let report):
            return ("video", videoEventData(report))
        case .web(let report):
            return ("web", webEventData(report))
        }
    }

    // MARK: Helpers

    /// Runs a runtime request; its `StageError` becomes the error reply with the same code.
    func stageCall(_ args: ControlArguments, _ body: () throws(StageError) -> Void) throws(ControlError) {
        do {
            try body()
        } catch {
            throw ControlError(code: error.code.rawValue, message: "\(args.command): \(error.message)")
        }
    }

    private func widgetValue(_ stage: any SceneControlling, id: String, _ args: ControlArguments) throws(ControlError) -> JSONValue {
        var properties: [String: PropertyValue] = [:]
        try stageCall(args) { () throws(StageError) in properties = try stage.widget(id: id) }
        var members = properties.mapValues(Self.json)
        members["id"] = .string(id)
        return .object(members)
    }

    static func property(_ value: JSONValue) -> PropertyValue {
        switch value {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .number(Double(i))
        case .double(let d): .number(d)
        case .string(let s): .string(s)
        case .array(let a): .array(a.map(property))
        case .object(let o): .object(o.mapValues(property))
        }
    }

    /// Whole numbers go out as JSON integers (`"x": 10`, not `10.0`); numbers JSON cannot carry as null.
    static func json(_ value: PropertyValue) -> JSONValue {
        switch value {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let d):
            guard d.isFinite else { return .null }
            return d.rounded() == d && abs(d) < 9.0e15 ? .int(Int64(d)) : .double(d)
        case .string(let s): return .string(s)
        case .array(let a): return .array(a.map(json))
        case .object(let o): return .object(o.mapValues(json))
        }
    }

    /// A data value as the runtime keeps it: strings as they are, numbers as written, booleans as true/false.
    static func dataText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): return s
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d):
            guard d.isFinite else { return nil }
            return d.rounded() == d && abs(d) < 9.0e15 ? String(Int64(d)) : String(d)
        case .null, .array, .object: return nil
        }
    }

    /// `{kind, duration?, easing?}`: duration defaults to 0.5 s (0 for a cut), easing to ease-in-out.
    static func transition(_ args: ControlArguments) throws(ControlError) -> Transition {
        let name = try args.string("kind")
        guard let kind = Transition.Kind(rawValue: name) else {
            throw args.invalid("kind", "must be one of \(Transition.Kind.allCases.map(\.rawValue).joined(separator: ", ")), got '\(name)'")
        }
        var transition = Transition.cut
        transition.kind = kind
        if kind != .cut {
            transition.duration = args.has("duration") ? try duration(args, "duration") : 0.5
            let timing = args.has("easing") ? try timingFunction(args, "easing") : .easeInOut
            transition.easing = switch timing {
            case .linear: .linear
            case .easeIn: .easeIn
            case .easeOut: .easeOut
            case .easeInOut: .easeInOut
            case .cubicBezier(let a, let b, let c, let d): .cubicBezier(a, b, c, d)
            }
        }
        return transition
    }

    /// `kind` basic (default; `duration`, `easing`), spring (`stiffness`, `damping`, `mass`, `velocity`) or
    /// decay (`velocity`, `deceleration`), with pop's defaults for what is not given.
    static func animation(_ args: ControlArguments) throws(ControlError) -> AnimationRequest {
        let kind = args.has("kind") ? try args.string("kind") : "basic"
        func positive(_ key: String, default value: Double, allowZero: Bool = false) throws(ControlError) -> Double {
            guard args.has(key) else { return value }
            let number = try args.number(key)
            guard number > 0 || (allowZero && number == 0) else {
                throw args.invalid(key, allowZero ? "must not be negative, got \(number)" : "must be greater than 0, got \(number)")
            }
            return number
        }
        switch kind {
        case "basic":
            let seconds = args.has("duration") ? try duration(args, "duration") : 0.3
            let timing = args.has("easing") ? try timingFunction(args, "easing") : .easeInOut
            return .basic(duration: seconds, timing: timing)
        case "spring":
            return .spring(stiffness: try positive("stiffness", default: 100), damping: try positive("damping", default: 10, allowZero: true),
                           mass: try positive("mass", default: 1), velocity: args.has("velocity") ? try args.numbers("velocity") : nil)
        case "decay":
            let deceleration = args.has("deceleration") ? try args.number("deceleration") : 0.998
            guard deceleration > 0, deceleration < 1 else {
                throw args.invalid("deceleration", "must be between 0 and 1 (exclusive), got \(deceleration)")
            }
            return .decay(velocity: try args.numbers("velocity"), deceleration: deceleration)
        default:
            throw args.invalid("kind", "must be basic, spring or decay, got '\(kind)'")
        }
    }

    /// A time as milliseconds since 1970-01-01 UTC (fractions allowed), in nanoseconds: the group clock's time in a
    /// sync group, the wall clock's otherwise.
    static func epochNanoseconds(_ args: ControlArguments, _ key: String) throws(ControlError) -> Int64 {
        let milliseconds = try args.number(key)
        guard milliseconds.isFinite, milliseconds >= 0, milliseconds < 9.0e12 else {
            throw args.invalid(key, "must be milliseconds since 1970-01-01 UTC, got \(milliseconds)")
        }
        return Int64((milliseconds * 1e6).rounded())
    }

    private static func duration(_ args: ControlArguments, _ key: String) throws(ControlError) -> Double {
        let seconds = try args.number(key)
        guard seconds >= 0, seconds <= 3600 else { throw args.invalid(key, "must be 0 to 3600 seconds, got \(seconds)") }
        return seconds
    }

    /// `linear`, `ease-in`, `ease-out`, `ease-in-out`, `cubic-bezier(x1, y1, x2, y2)` or `[x1, y1, x2, y2]`.
    static func timingFunction(_ args: ControlArguments, _ key: String) throws(ControlError) -> TimingFunction {
        let named: [String: TimingFunction] = ["linear": .linear, "ease-in": .easeIn, "ease-out": .easeOut, "ease-in-out": .easeInOut]
        let value = args[key] ?? .null
        var points: [Double]?
        if case .array = value {
            points = try args.numbers(key)
        } else {
            let text = try args.string(key)
            if let timing = named[text] { return timing }
            if text.hasPrefix("cubic-bezier("), text.hasSuffix(")") {
                let inner = text.dropFirst("cubic-bezier(".count).dropLast()
                let parsed = inner.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
                points = parsed.count == 4 ? parsed : nil
            }
            guard points != nil else {
                throw args.invalid(key, "must be linear, ease-in, ease-out, ease-in-out or cubic-bezier(x1, y1, x2, y2), got '\(text)'")
            }
        }
        guard let p = points, p.count == 4, (0...1).contains(p[0]), (0...1).contains(p[2]), p.allSatisfy(\.isFinite) else {
            throw args.invalid(key, "needs four numbers x1, y1, x2, y2 with x1 and x2 in 0...1")
        }
        return .cubicBezier(p[0], p[1], p[2], p[3])
    }
}
