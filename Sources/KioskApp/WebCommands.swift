import KioskControl
import KioskCore
import KioskRuntime

/// The web commands (`web.state`, `web.reload`) and the `web` event, through the scene runtime's web widgets. `id`
/// names the widget; without it, the scene's only web widget is meant.
extension ControlWiring {
    func registerWebCommands() {
        let commands = server.commands
        commands.register(.webState, arguments: ["id"]) { [unowned self] args, _ in
            let webs = try webRuntime(args)
            return try webState(webs, id: try webID(args), args)
        }
        // With `url`, another address for the widget until the scene is loaded again: https, http or file only.
        commands.register(.webReload, arguments: ["id", "url"]) { [unowned self] args, _ in
            let webs = try webRuntime(args)
            let id = try webID(args)
            let url = args.has("url") ? try args.string("url") : nil
            try webCall(args) { () throws(StageError) in try webs.reloadWeb(id: id, url: url) }
            return try webState(webs, id: id, args)
        }
    }

    /// The `web` event's data: `{id, kind, url}` and, for a failure, the engine's `message`.
    static func webEventData(_ report: WebEventReport) -> JSONValue {
        var data: [String: JSONValue] = ["kind": .string(report.kind.rawValue), "url": .string(report.url),
                                         "id": report.id.map(JSONValue.string) ?? .null]
        if let message = report.message { data["message"] = .string(message) }
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
        try webCall(args) { () throws(StageError) in state = try webs.webState(id: id) }
        return .object(state.mapValues(Self.json))
    }

    private func webCall(_ args: ControlArguments, _ body: () throws(StageError) -> Void) throws(ControlError) {
        do {
            try body()
        } catch {
            throw ControlError(code: error.code.rawValue, message: "\(args.command): \(error.message)")
        }
    }
}
