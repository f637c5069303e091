import Foundation
import KioskControl
import KioskCore
import KioskFleet
import KioskRuntime
import KioskScene
import Logging

/// Connects a running `kioskd run` to its MQTT broker: the fleet client answers through the control socket's
/// command registry, publishes the state (each output's under `outputs`) and every output's scene events (each
/// naming its output), and feeds the scenes' data sources. Holds the client and its listeners on the scenes for as
/// long as the run lasts. Lives on the main thread.
public final class FleetWiring {
    let client: FleetClient
    /// The outputs' scene events, published and followed (data sources, state) while the client runs.
    private let sceneListeners: [ListenerToken]

    private init(client: FleetClient, sceneListeners: [ListenerToken]) {
        self.client = client
        self.sceneListeners = sceneListeners
    }

    /// Ends the MQTT session (`FleetClient.stop`).
    func stop() { client.stop() }

    /// The config file's `mqtt:` section, validated, the file it is in (for errors), and the password read from
    /// its password file when kioskd started. A plain value.
    public struct Configuration {
        public var settings: MQTTSettings
        public var file: String
        public var password: String?
        /// The `sync:` section: the sync group this kiosk joins on the broker.
        public var sync: SyncSettings?

        public init(settings: MQTTSettings, file: String, password: String? = nil, sync: SyncSettings? = nil) {
            self.settings = settings
            self.file = file
            self.password = password
            self.sync = sync
        }
    }

    /// Starts the fleet client, or returns nil when the config file has no `mqtt:` section.
    ///
    /// - Throws: a command in `mqtt.allow` that does not exist, a configuration that needs the control socket's
    ///   commands while the socket is disabled.
    static func start(_ configuration: Configuration?, loop: MainLoop, control: ControlWiring?, outputs: KioskOutputs,
                      logger: Logger) throws -> FleetWiring? {
        guard let configuration else { return nil }
        let settings = configuration.settings
        guard let control else {
            throw KioskConfigurationError("\(configuration.file): mqtt: MQTT answers through the control socket's commands; do not give --socket none")
        }
        let fleet: FleetClient
        do { fleet = try FleetClient(settings: settings, password: configuration.password, registry: control.server.commands, loop: loop) } catch {
            throw KioskConfigurationError("\(configuration.file): \(error)")
        }
        if let sync = configuration.sync {
            let group = fleet.joinSyncGroup(sync, clientID: settings.resolvedClientID())
            control.syncStats = { [weak group, unowned first = outputs.first] in
                guard let group, case .object(var members) = group.statistics(realNow: Self.realTimeNow()) else { return .null }
                members["phase_error_ms"] = Self.phaseErrors(first.stage.turnPhaseErrors, recent: first.stage.recentTurns)
                return .object(members)
            }
            // Every output's page loop and tickers run on the group's time.
            for output in outputs.outputs { output.stage.timeline = group }
            logger.info("sync group \(sync.group): joining as \(group.id) (\(sync.role.rawValue))")
        }
        let registry = control.server.commands
        let started = MonotonicInstant.now()
        let stage = outputs.first.stage
        fleet.state = { [unowned fleet] in
            var value = state(registry: registry, uptime: MonotonicInstant.now() - started)
            if case .object(var members) = value {
                members["mqtt_longest_loop_hold_ms"] = .double((fleet.connection.longestLoopHold.milliseconds * 1000).rounded() / 1000)
                members["mqtt_longest_loop_block_ms"] = .double((fleet.connection.longestLoopBlock.milliseconds * 1000).rounded() / 1000)
                value = .object(members)
            }
            return value
        }
        fleet.onData = { [stages = outputs.stages] values in try stages.setData(values) }
        fleet.onError = { [weak fleet, server = control.server] code, message in
            let data: JSONValue = ["code": .string(code), "message": .string(message)]
            server.broadcast(event: "error", data: data)
            fleet?.publish(event: "error", data: data)
        }
        fleet.pages = { [unowned stage] in stage.scene.pages.map(\.name) }
        fleet.actions = { [outputs = outputs.outputs] in outputs.flatMap { $0.stage.scene.allWidgets.compactMap { $0.onPress?.emittedName } } }
        fleet.version = kioskdVersion
        fleet.setDataSources(stage.scene.dataSources)
        // Every output's scene events, each naming its output; data is the kiosk's, told once (the first output's),
        // and so are the data sources.
        let sceneListeners = outputs.outputs.map { output in
            output.stage.addEventListener { [weak fleet, unowned output, unowned first = outputs.first] event in
                guard let fleet else { return }
                if case .dataChanged = event, output !== first { return }
                var (name, data) = ControlWiring.eventMessage(event)
                if case .object(var members) = data {
                    members["output"] = .string(output.name)
                    data = .object(members)
                }
                fleet.publish(event: name, data: data)
                switch event {
                case .sceneLoaded:
                    if output === first { fleet.sceneChanged(dataSources: output.stage.scene.dataSources) }
                    fleet.stateMayHaveChanged()
                case .pageShown:
                    fleet.stateMayHaveChanged()
                case .web(let report) where report.kind == .emit:
                    // As an on_press emit does: the action's name on <prefix>/action.
                    if let action = report.action { fleet.actionEmitted(action) }
                case .dataChanged, .error, .video, .web:
                    break
                }
            }
        }
        fleet.start()
        logger.info("MQTT \(settings.host):\(settings.port): topics under \(fleet.prefix)\(settings.groups.isEmpty ? "" : ", groups \(settings.groups.joined(separator: ", "))")")
        return FleetWiring(client: fleet, sceneListeners: sceneListeners)
    }

    /// `<prefix>/state`: the figures `stats` and `scene.get` give, as those commands compute them: the first
    /// output's at the top level, and each output's own under `outputs`, named by its connector.
    /// The phase errors of the last page turns on the group clock (`SceneStage.turnPhaseErrors`): p50 and p99 of
    /// their sizes in milliseconds, and how many; null figures before a turn. `last` lists the last turns, each
    /// `{turn, error}`: the turn's group time in milliseconds since the epoch and its signed phase error in
    /// milliseconds, so the members' flips of one turn can be set side by side.
    static func phaseErrors(_ errors: [Int64], recent: [(due: Int64, error: Int64)] = []) -> JSONValue {
        let sorted = errors.map { abs(Double($0)) / 1e6 }.sorted()
        func at(_ q: Double) -> JSONValue { sorted.isEmpty ? .null : .double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))]) }
        let last = recent.map { turn -> JSONValue in
            ["turn": .int(turn.due / 1_000_000), "error": .double((Double(turn.error) / 1e3).rounded() / 1e3)]
        }
        return ["p50": at(0.5), "p99": at(0.99), "turns": .int(Int64(sorted.count)), "last": .array(last)]
    }

    /// CLOCK_REALTIME in nanoseconds.
    static func realTimeNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    static func state(registry: CommandRegistry, uptime: Duration) -> JSONValue {
        let stats = localResult(registry, "stats")
        let scene = localResult(registry, "scene.get")
        let byOutput = stats["by_output"]?.objectValue ?? [:]
        let outputs: [JSONValue] = (stats["outputs"]?.arrayValue ?? []).map { listed in
            let name = listed["connector"] ?? .null
            let figures: JSONValue = { if case .string(let key) = name { return byOutput[key] ?? [:] }; return [:] }()
            return [
                "connector": name,
                "connected": listed["connected"] ?? .null,
                "mode": listed["mode"]?["name"] ?? .null,
                "modes": .array((listed["modes"]?.arrayValue ?? []).compactMap { $0["name"] }),
                "power": listed["power"] ?? .null,
                "rotation": listed["rotation"] ?? .null,
                "scene": listed["scene"] ?? .null,
                "page": listed["page"] ?? .null,
                "fps": figures["fps"] ?? figures["average_fps"] ?? .null,
                "missed_vblanks": figures["missed_vblanks"] ?? .null,
                "frames_flipped": figures["frames_flipped"] ?? .null,
                "health": ["healthy": figures["healthy"] ?? .null, "reason": figures["health_reason"] ?? .null],
            ]
        }
        return [
            "version": .string(kioskdVersion),
            "scene": scene["source"] ?? .null,
            "page": scene["current_page"] ?? .null,
            "sync": stats["sync"] ?? .null,
            "power": stats["power"] ?? .null,
            "mode": stats["mode"] ?? .null,
            "connector": stats["connector"] ?? .null,
            // The engine's flips per second over the last second or more; the run's average without an engine.
            "fps": stats["fps"] ?? stats["average_fps"] ?? .null,
            "outputs": .array(outputs),
            "missed_vblanks": stats["missed_vblanks"] ?? .null,
            // The frame path's health signal (the one the watchdog is fed from), as `stats` gives it.
            "health": ["healthy": stats["healthy"] ?? .null, "reason": stats["health_reason"] ?? .null],
            "frames_flipped": stats["frames_flipped"] ?? .null,
            "uptime_s": .int(uptime.nanosecondsClamped / 1_000_000_000),
            "clock_synchronized": stats["clock_synchronized"] ?? .null,
            // The asset cache: bytes, entries, hits, failed fetches by reason, stale and missing assets.
            "cache": stats["cache"] ?? .null,
        ]
    }

    /// The result of an immediate command run in-process, or an empty object when it failed.
    private static func localResult(_ registry: CommandRegistry, _ command: String) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        registry.start(ControlRequest(command: command), from: localClient) { reply in
            result = reply["result"]?.objectValue ?? [:]
        }
        return result
    }

    private nonisolated(unsafe) static let localClient = ControlConnection.remote(number: -1)
}
