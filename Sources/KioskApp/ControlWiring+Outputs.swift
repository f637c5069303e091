import KioskControl
import KioskCore
import KioskDisplay
import KioskRuntime

/// The control commands over the outputs: `output` names the one a command acts on (the first when absent; in any
/// case, `KioskOutputs.output(named:)`), an unknown name is `not_found` naming the outputs driven, `output.info` and
/// `stats` list every output, `stats` has each output's figures under its name, `data.set` reaches every output's
/// scene. Main thread.
extension ControlWiring {
    /// The output `args` names (`output`), else the first.
    func drivenOutput(_ args: ControlArguments) throws -> DrivenOutput {
        let wanted = args.has("output") ? try args.string("output") : nil
        do { return try outputs.output(named: wanted) } catch {
            throw ControlError(code: "not_found", message: "\(args.command): \(error)")
        }
    }

    /// The scene a scene command acts on: the stage of the output `args` names.
    func stage(_ args: ControlArguments) throws -> any SceneControlling {
        try drivenOutput(args).stage
    }

    /// The scanout verification of `output`.
    func verifier(of output: DrivenOutput) -> ScanoutVerifier? {
        verifiers.first { $0.engine === output.engine }
    }

    /// `data.set`: every output's scene.
    func setDataEverywhere(_ values: [String: String]) throws(StageError) {
        try outputs.stages.setData(values)
    }

    /// `no_display`: the output a command needs has no display now; the message lists the connectors its probes saw.
    static func notConnected(_ command: String, output: DrivenOutput) -> ControlError {
        let seen = output.manager.connectors.map { "\($0.name) (\($0.isConnected ? "connected" : "disconnected"))" }
        return ControlError(code: "no_display", message: "\(command): output \(output.name): no display is connected; kioskd waits for one"
            + (seen.isEmpty ? "" : " (connectors: \(Set(seen).sorted().joined(separator: ", ")))"))
    }

    /// `output.info`'s and `stats`' `outputs`: each output's name, whether a display is connected, and for one that
    /// is, what `output.info` says of it; its scene and page.
    func outputsListing() -> JSONValue {
        .array(outputs.outputs.map { output in
            var members: [String: JSONValue] = [
                "connector": .string(output.name), "connected": .bool(output.engine.hasOutput),
                "active": .bool(output.engine.hasOutput),
                "rotation": .int(Int64(output.rotation.rawValue)),
                "scene": .string(output.stage.source), "page": .string(output.stage.currentPage),
            ]
            if let display = output.engine.backend {
                members.merge(outputMembers(display, rotation: output.rotation)) { ours, _ in ours }
            }
            return .object(members)
        })
    }

    /// Every connector the outputs' probes saw, connected or not, and whether an output drives it.
    func connectorsListing() -> JSONValue {
        var seen = Set<String>()
        var listed: [JSONValue] = []
        for output in outputs.outputs {
            for c in output.manager.connectors where seen.insert("\(c.device) \(c.name)").inserted {
                let active = outputs.outputs.contains { $0.manager.current?.device == c.device && $0.manager.current?.connector == c.name }
                var members: [String: JSONValue] = [
                    "device": .string(c.device), "connector": .string(c.name), "connected": .bool(c.isConnected), "active": .bool(active),
                ]
                if let mode = c.preferredMode { members["preferred_mode"] = Self.modeValue(mode) }
                listed.append(.object(members))
            }
        }
        return .array(listed)
    }

    /// `stats`' `by_output`: each output's flip counters and engine figures under its name; the first's are the top
    /// level's (`first`), computed once: `stats` is asked often, and each report reads the process's memory.
    func statsByOutput(first: JSONValue) throws -> JSONValue {
        var byOutput: [String: JSONValue] = [:]
        for output in outputs.outputs {
            let display = output.engine.backend
            var value = output === outputs.first ? first
                : try Self.statsValue(flips: output.flips, engine: output.engine.stats, info: display?.info, loop: loop,
                                      rotation: output.rotation, poweredOn: display?.isPoweredOn ?? false,
                                      pacing: display?.flipPacing ?? .vblank)
            if case .object(var members) = value {
                members["display_connected"] = .bool(display != nil)
                if let verifier = verifier(of: output) { members.merge(verifier.statsMembers) { _, verify in verify } }
                // The process's memory is the kiosk's, at the top level.
                members["memory"] = nil
                value = .object(members)
            }
            byOutput[output.name] = value
        }
        return .object(byOutput)
    }
}
