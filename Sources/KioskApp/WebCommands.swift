import KioskControl
import KioskCore
import KioskRuntime
import KioskWeb

/// The web commands (`web.state`, `web.reload`) and the `web` event, through the scene runtime's web widgets. `id`
/// names the widget; without it, the scene's only web widget is meant.
extension ControlWiring {
    func registerWebCommands() {
        let commands = server.commands
        commands.register(.webState, arguments: ["id"]) { [unowned self] args, _ in
            let webs = try webRuntime(args)
            return try webState(webs, id: try webID(args), args)
        }
        commands.register(.webReload, arguments: ["id"]) { [unowned self] args, _ in
            let webs = try webRuntime(args)
            let id = try webID(args)
            try stageCall(args) { () throws(StageError) in try webs.reloadWeb(id: id) }
            return try webState(webs, id: id, args)
        }
        // Another address for the widget until the scene is loaded again: https, http or file, and within the
        // widget's allowed_origins when it has them.
        commands.register(.webNavigate, arguments: ["id", "url"]) { [unowned self] args, _ in
            let webs = try webRuntime(args)
            let id = try webID(args)
            let url = try args.string("url")
            try stageCall(args) { () throws(StageError) in try webs.navigateWeb(id: id, url: url) }
            return try webState(webs, id: id, args)
        }
        // Off unless the config says `web: {allow_eval: true}`: a script runs with the page's rights.
        commands.registerDeferred(.webEval, arguments: ["id", "script"]) { [unowned self] args, _, reply in
            guard allowsWebEval else {
                throw ControlError(code: "permission_denied", message: "web.eval: running scripts in pages is off (set web: {allow_eval: true} in the config)")
            }
            let webs = try webRuntime(args)
            let id = try webID(args)
            let script = try args.string("script")
            guard script.utf8.count <= Self.maximumScriptBytes else {
                throw args.invalid("script", "is longer than \(Self.maximumScriptBytes) bytes")
            }
            try stageCall(args) { () throws(StageError) in
                try webs.evaluateWeb(id: id, script: script) { result in
                    switch result {
                    case .success(let value): reply.succeed(["value": .string(value)])
                    case .failure(let error): reply.fail(ControlError(code: error.code.rawValue, message: "web.eval: \(error.message)"))
                    }
                }
            }
        }
        commands.register(.webClearData, arguments: []) { _, _ in
            WPEWeb.clearData()
            return ["cleared": .bool(true)]
        }
    }

    /// The longest script `web.eval` takes.
    static let maximumScriptBytes = 64 * 1024

    /// `web_restarts` over every output's web widgets, for `stats`.
    func webStats() -> [String: JSONValue] {
        guard let webs = scene as? WebControlling else { return [:] }
        return ["web_restarts": .int(Int64(webs.webRestarts))]
    }

    /// The `web` event's data: `{id, kind, url}` and, for a failure, the engine's `message`.
    static func webEventData(_ report: WebEventReport) -> JSONValue {
        var data: [String: JSONValue] = ["kind": .string(report.kind.rawValue), "url": .string(report.url),
                                         "id": report.id.map(JSONValue.string) ?? .null]
        if let message = report.message { data["message"] = .string(message) }
        if let action = report.action { data["action"] = .string(action) }
        if report.kind == .emit { data["payload"] = report.payload.map(JSONValue.string) ?? .null }
        return .object(data)
    }

    private func webRuntime(_ args: ControlArguments) throws(ControlError) -> any WebControlling {
        guard let webs = scene as? WebControlling else { throw ControlError(code: "not_found", message: "\(args.command): the scene has no web widgets") }
        return webs
    }

    private func webID(_ args: ControlArguments) throws(ControlError) -> String? {
        args.has("id") ? try args.string("id") : nil
    }

    private func webState(_ webs: any WebControlling, id: String?, _ args: ControlArguments) throws(ControlError) -> JSONValue {
        var state: [String: PropertyValue] = [:]
        try stageCall(args) { () throws(StageError) in state = try webs.webState(id: id) }
        return .object(state.mapValues(Self.json))
    }
}
