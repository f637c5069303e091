import KioskControl
import KioskCore
import KioskDisplay
import KioskRuntime

/// The control commands on several outputs (`outputs:`): `output` names the one a command acts on (the first when
/// absent), an unknown name is `not_found` naming the outputs driven, `display.info` without `output` lists every
/// output, `stats` has each output's figures under its name, `data.set` reaches every output's scene. Main thread.
extension ControlWiring {
    /// Drives the commands over the outputs of `wiring`. The first output's engine and stage are the run
    /// session's (`engine`, `scene`); the others' faults and scene events reach subscribers too.
    func attach(_ wiring: MultiOutputWiring) {
        several = wiring
        outputListeners = wiring.outputs.dropFirst().flatMap { output -> [ListenerToken] in [
            output.engine.addFaultListener { [weak self, connector = output.connector] fault in
                self?.server.broadcast(event: "error", data: ["code": .string(fault.code.rawValue),
                                                              "message": .string("output \(connector): \(fault.message)")])
            },
            output.stage.addEventListener { [weak self, connector = output.connector] event in
                // Data is the kiosk's: its change is told once, by the first output's stage.
                if case .dataChanged = event { return }
                var (name, data) = Self.eventMessage(event)
                if case .object(var members) = data {
                    members["output"] = .string(connector)
                    data = .object(members)
                }
                self?.server.broadcast(event: name, data: data)
            },
        ] }
    }

    /// With several outputs, the one `args` names (`output`, case-insensitive), else the first; nil with one output.
    func drivenOutput(_ args: ControlArguments) throws -> DrivenOutput? {
        guard let several else { return nil }
        let wanted = args.has("output") ? try args.string("output") : nil
        do { return try several.output(named: wanted) } catch {
            throw ControlError(code: "not_found", message: "\(args.command): \(error)")
        }
    }

    /// The scene a scene command acts on: the named output's stage with several outputs; with one, the stage, once
    /// an `output` given names the output shown on.
    func stage(_ args: ControlArguments) throws -> any SceneControlling {
        if let output = try drivenOutput(args) { return output.stage }
        if args.has("output") { _ = try shownDisplay(args) }
        return scene
    }

    /// `data.set`: every output's scene.
    func setDataEverywhere(_ values: [String: String]) throws(StageError) {
        guard let several else { return try scene.setData(values) }
        try several.stages.setData(values)
    }

    /// `no_display` for one of several outputs that has no display now.
    static func noDisplay(_ command: String, output: DrivenOutput) -> ControlError {
        let seen = output.manager.connectors.filter { $0.name.lowercased() == output.connector.lowercased() }
        return ControlError(code: "no_display", message: "\(command): output \(output.connector): no display is connected; kioskd waits for one"
            + (seen.isEmpty ? " (no connector of that name was found)" : ""))
    }

    /// `display.info`'s `outputs` with several outputs: each output's connector, whether a display is connected,
    /// and for one that is, what `display.info` says of it; its scene and page.
    func outputsListing(_ wiring: MultiOutputWiring) -> JSONValue {
        .array(wiring.outputs.map { output in
            var members: [String: JSONValue] = [
                "connector": .string(output.connector), "connected": .bool(output.engine.hasOutput),
                "active": .bool(output.engine.hasOutput),
                "rotation": .int(Int64(output.rotation.rawValue)),
                "scene": .string(output.stage.source), "page": .string(output.stage.currentPage),
            ]
            if let display = output.engine.backend {
                members.merge(displayMembers(display, rotation: output.rotation)) { ours, _ in ours }
            }
            return .object(members)
        })
    }

    /// `stats`' `by_output`: each output's flip counters and engine figures, as the top level has them for the
    /// first, under its connector's name.
    func statsByOutput(_ wiring: MultiOutputWiring) throws -> JSONValue {
        var byOutput: [String: JSONValue] = [:]
        for output in wiring.outputs {
            let display = output.engine.backend
            var value = try Self.statsValue(flips: output.flips(), engine: output.engine.stats, info: display?.info, loop: loop,
                                            rotation: output.rotation, poweredOn: display?.isPoweredOn ?? false,
                                            pacing: display?.flipPacing ?? .vblank)
            if case .object(var members) = value {
                members["display_connected"] = .bool(display != nil)
                // The process's memory is the kiosk's, at the top level.
                members["memory"] = nil
                value = .object(members)
            }
            byOutput[output.connector] = value
        }
        return .object(byOutput)
    }
}
