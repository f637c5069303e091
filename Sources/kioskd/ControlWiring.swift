import ArgumentParser
import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskRuntime
import KioskScene
import KioskService
import Logging

/// kioskd's version, as `version` over the control socket reports it.
let kioskdVersion = KioskVersion.string

/// Options of `kioskd run` for the control socket.
struct ControlOptions: ParsableArguments {
    @Option(help: "Control socket path (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock); 'none' disables it.")
    var socket: String?

    @Option(help: "Group (name or number) owning the control socket (mode 0660); its members may connect.")
    var socketGroup: String?

    @Option(name: .customLong("control-allow-uid"), help: "Also allow this uid on the control socket (repeatable; root and kioskd's own user always are).")
    var allowUIDs: [UInt32] = []

    @Option(name: .customLong("control-allow-gid"), help: "Also allow peers whose primary gid is this (repeatable).")
    var allowGIDs: [UInt32] = []

    @Option(help: ArgumentHelp("The only folder `screenshot` may write a server-side file into (default \(ScreenshotDirectory.defaultPath)).", valueName: "DIR"))
    var screenshotDir: String?
}

/// The log level every kioskd logger consults, so `log.level` changes it at run time. Any thread.
let runtimeLogLevel = Lock<Logger.Level>(.info)

/// A stderr log handler whose level is `runtimeLogLevel`. A value copied into each logger; any thread.
struct AdjustableLogHandler: LogHandler {
    var inner: any LogHandler

    var logLevel: Logger.Level {
        get { runtimeLogLevel.withLock { $0 } }
        set { runtimeLogLevel.withLock { $0 = newValue } }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        inner.log(event: event)
    }
}

/// Connects the control socket to a running `kioskd run`: registers the daemon's commands and forwards flips,
/// presented frames and scene events to subscribers. The commands live in one file per area
/// (`DisplayCommands`, `SceneCommands`). Lives on the main thread, beside the loop it serves.
final class ControlWiring {
    let server: ControlServer
    let loop: MainLoop
    let jobs: BackgroundJobs
    /// The output shown on now; nil while no display is connected.
    var display: (any DisplayBackend)? { engine?.backend }
    /// Keeps the output in step with the connectors (DRM); `display.info` lists them.
    var outputs: OutputManager?
    /// The outputs of an `outputs:` section, when there is one (`ControlWiring+Outputs.swift`).
    var several: MultiOutputWiring?
    /// The flip counters and engine statistics of the scene being shown; set once the scene runs.
    var liveStats: () -> (FlipStatistics, EngineStats?) = { (FlipStatistics(), nil) }
    /// The output rotation the scene is composed with (`--rotation`, board file), for `stats` and `display.info`.
    var rotation = OutputRotation.degrees0
    /// Where `screenshot` may write files (`--screenshot-dir`).
    var screenshotDirectory = ScreenshotDirectory()
    /// The layer engine of the run, attached when its session starts: power goes
    /// through it so lighting the output redraws, and its presents become `frame` events.
    var engine: LayerEngine? {
        didSet { hookEngine() }
    }
    /// The scene runtime the scene commands drive: `kioskd run` always shows a scene.
    let scene: any SceneControlling
    /// Members added to `stats` and `display.info` (the screen's idle state).
    var statusExtras: () -> [String: JSONValue] = { [:] }
    /// Called after `display.power` changed the output's power.
    var onDisplayPower: ((Bool) -> Void)?
    /// Presents that changed the screen since the engine was attached: the `frame` event's number.
    private var framesPresented: Int64 = 0
    /// The scene's events, forwarded to subscribers (`hookScene`).
    var sceneListener: ListenerToken?
    /// The attached engine's presents and faults (`hookEngine`); replaced with the engine.
    private var engineListeners: [ListenerToken] = []
    /// The faults and scene events of the outputs after the first (`attach(_:)`).
    var outputListeners: [ListenerToken] = []

    static func bootstrapLogging(level: Logger.Level) {
        runtimeLogLevel.withLock { $0 = level }
        // Under systemd each line carries its syslog priority, so the journal files errors as errors.
        let journal = JournalLogHandler.isJournalStream()
        LoggingSystem.bootstrap { label in
            var inner: any LogHandler = journal ? JournalLogHandler(label: label) : StreamLogHandler.standardError(label: label)
            inner.logLevel = .trace  // the wrapper's level decides
            return AdjustableLogHandler(inner: inner)
        }
    }

    /// How the diagnostic page names the control socket these options give, before it is opened: its path
    /// (handed over by systemd when `inheritedListenFD` is set), or that it is disabled.
    static func socketDescription(options: ControlOptions, inheritedListenFD: Int32?) -> String {
        let explicit = options.socket ?? ProcessInfo.processInfo.environment["KIOSKD_SOCKET"]
        if explicit == "none" { return "none (disabled)" }
        let path = explicit ?? ControlServerOptions.defaultSocketPath
        return inheritedListenFD != nil ? "\(path) (from systemd)" : path
    }

    /// Starts the control socket, or returns nil when it is disabled. A socket path given explicitly (option or
    /// KIOSKD_SOCKET) must work or kioskd fails; the default one is best effort, because a kiosk that cannot
    /// offer its socket (another instance, a read-only /run) should still show its display.
    static func start(options: ControlOptions, inheritedListenFD: Int32? = nil, loop: MainLoop,
                      scene: any SceneControlling,
                      logger: Logger) throws -> ControlWiring? {
        let explicit = options.socket ?? ProcessInfo.processInfo.environment["KIOSKD_SOCKET"]
        if explicit == "none" { return nil }
        var serverOptions = ControlServerOptions(socketPath: explicit ?? ControlServerOptions.defaultSocketPath)
        serverOptions.inheritedListenFD = inheritedListenFD
        serverOptions.policy = PeerPolicy(allowedUIDs: Set(options.allowUIDs), allowedGIDs: Set(options.allowGIDs))
        if let groupName = options.socketGroup {
            let gid = try resolveGroup(groupName)
            serverOptions.socketGroup = gid
            serverOptions.policy.allowedGIDs.insert(gid)
        }
        do {
            let server = try ControlServer(loop: loop, options: serverOptions)
            let wiring = try ControlWiring(server: server, loop: loop, scene: scene)
            assert(wiring.server.commands.commandNames == MQTTSettings.knownCommands.sorted(),
                   "MQTTSettings.knownCommands must list the registry's commands: \(wiring.server.commands.commandNames)")
            if let directory = options.screenshotDir { wiring.screenshotDirectory = ScreenshotDirectory(directory) }
            return wiring
        } catch {
            guard explicit == nil else { throw error }
            logger.error("\(error); running without a control socket")
            return nil
        }
    }

    private static func resolveGroup(_ name: String) throws -> UInt32 {
        if let gid = UInt32(name) { return gid }
        guard let entry = getgrnam(name) else { throw ValidationError("--socket-group \(name): no such group") }
        return entry.pointee.gr_gid
    }

    private init(server: ControlServer, loop: MainLoop, scene: any SceneControlling) throws {
        self.server = server
        self.loop = loop
        self.scene = scene
        self.jobs = try BackgroundJobs(loop: loop, label: "kioskd.control.jobs")
        let commands = server.commands
        commands.register("version") { _, _ in
            ["version": .string(kioskdVersion), "protocol": 1, "commands": .array(commands.commandNames.map(JSONValue.string))]
        }
        commands.register("stats") { [unowned self] _, _ in
            let (flips, engine) = liveStats()
            var stats = try ControlWiring.statsValue(flips: flips, engine: engine, info: display?.info, loop: loop,
                                                     rotation: rotation, poweredOn: display?.isPoweredOn ?? false,
                                                     pacing: display?.flipPacing ?? .vblank)
            // The control socket's own load, beside the `--stats-out` counters.
            if case .object(var members) = stats {
                members["control_clients"] = .int(Int64(server.connections.count))
                members["display_connected"] = .bool(display != nil)
                if let outputs { members["outputs"] = outputsValue(outputs) }
                if let several { members["outputs"] = outputsListing(several); members["by_output"] = try statsByOutput(several) }
                members.merge(statusExtras()) { _, extra in extra }
                members.merge(videoStats()) { _, video in video }
                stats = .object(members)
            }
            return stats
        }
        commands.register("log.level", arguments: ["level"]) { args, _ in
            if args["level"] != nil {
                let name = try args.string("level")
                guard let level = Logger.Level(rawValue: name) else {
                    throw ControlError.invalidArgument("log.level: unknown level '\(name)'; one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                runtimeLogLevel.withLock { $0 = level }
            }
            return ["level": .string(runtimeLogLevel.withLock { $0 }.rawValue)]
        }
        registerDisplayCommands()
        registerSceneCommands()
        registerVideoCommands()
        hookScene()
    }

    /// The `--stats-out` counters as a JSON value: the output's figures over the engine's, as the file has them.
    static func statsValue(flips: FlipStatistics, engine: EngineStats?, info: OutputInfo?, loop: MainLoop,
                           rotation: OutputRotation, poweredOn: Bool, pacing: FlipPacing) throws -> JSONValue {
        let report = try JSONValue(encoding: RunStatsReport(flips: flips, info: info, loop: loop, rotation: rotation, poweredOn: poweredOn,
                                                            pacing: pacing),
                                   snakeCaseKeys: true)
        guard let engine, case .object(var merged) = try JSONValue(encoding: engine, snakeCaseKeys: true),
              case .object(let mine) = report else { return report }
        merged.merge(mine) { _, ours in ours }
        return .object(merged)
    }

    /// Forwards a completed flip to `flip` subscribers.
    func flipped(_ event: FlipEvent) {
        guard server.hasSubscribers("flip") else { return }
        server.broadcast(event: "flip", data: [
            "sequence": .int(Int64(clamping: event.sequence)),
            "timestamp_ns": .int(Int64(clamping: event.timestamp.nanoseconds)),
        ])
    }

    /// Forwards a present that changed the screen to `frame` subscribers, beside the engine's other listeners (the
    /// run session's). The listeners of an engine attached before go with it.
    private func hookEngine() {
        engineListeners = []
        guard let engine else { return }
        engineListeners = [
            engine.addPresentListener { [weak self] damage in self?.presented(damage: damage) },
            // Faults of the frame path reach subscribers as `error` events, as failed renders do.
            engine.addFaultListener { [weak self] fault in
                self?.server.broadcast(event: "error", data: ["code": .string(fault.code.rawValue), "message": .string(fault.message)])
            },
        ]
    }

    private func presented(damage: [Rect]) {
        framesPresented += 1
        guard server.hasSubscribers("frame") else { return }
        server.broadcast(event: "frame", data: [
            "frame": .int(framesPresented),
            "damage_rects": .int(Int64(damage.count)),
            "timestamp_ns": .int(Int64(clamping: loop.now.nanoseconds)),
        ])
    }

    func stop() { server.stop() }
}
