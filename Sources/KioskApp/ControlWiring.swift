import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskRuntime
import KioskScene
import KioskService
import Logging

/// kioskd's version, as `version` over the control socket reports it.
public let kioskdVersion = KioskVersion.string

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

/// Connects the control socket to a running `kioskd run`: registers the daemon's commands and forwards every
/// output's flips, presented frames, faults and scene events to subscribers, each naming its output. The commands live
/// in one file per area (`OutputCommands`, `SceneCommands`, `VideoCommands`, `ControlWiring+Outputs`). Lives on the
/// main thread, beside the loop it serves.
public final class ControlWiring {
    let server: ControlServer
    let loop: MainLoop
    let jobs: BackgroundJobs
    /// The outputs driven; commands act on the one their `output` names, else the first.
    let outputs: KioskOutputs
    /// The flip counters of the first output's run session (`--frames`); set once the run starts.
    var liveStats: () -> FlipStatistics = { FlipStatistics() }
    /// Where `screenshot` may write files (`--screenshot-dir`).
    var screenshotDirectory = ScreenshotDirectory()
    /// `web.allow_eval`: whether `web.eval` runs scripts in pages.
    var allowsWebEval = false
    /// The first output's scene, which the video commands drive.
    var scene: SceneStage { outputs.first.stage }
    /// Members added to `stats` and `output.info` (the screen's idle state).
    var statusExtras: () -> [String: JSONValue] = { [:] }
    /// `stats`' `data_sources`: the scene's HTTP and RSS sources (DataSourceWiring).
    var dataSourceStats: (() -> JSONValue)?
    /// `stats`' `vnc`: each output's remote view (VNCWiring), with `vnc:`.
    var vncStats: (() -> JSONValue)?
    /// `stats`' `sync`: the sync group's role, leader, members and clock (FleetWiring), with `sync:`.
    var syncStats: (() -> JSONValue)?
    /// The asset cache's owner: `stats`' `cache`, `cache.clear` and `cache.refresh`.
    weak var remoteAssets: RemoteAssetWiring?
    /// Whether the wall clock is synchronized: `stats` gives `clock_synchronized`, read afresh.
    weak var clockTrust: ClockTrust?
    /// Scenes named by URL, for `scene.load {url}`.
    weak var remoteScenes: RemoteSceneWiring?
    /// The proof-of-play store `plays` reads, nil while nothing is recorded.
    var playsPath: String?
    /// Each output's scanout verification, in the outputs' order (`output.verify`, `stats`' `verify`).
    var verifiers: [ScanoutVerifier] = []
    /// Called after `output.power` changed an output's power.
    var onOutputPower: ((Bool) -> Void)?
    /// Presents that changed each output's screen: the `frame` event's number, by output.
    private var framesPresented: [ObjectIdentifier: Int64] = [:]
    /// Every output's presents, flips, faults and scene events (`hookOutputs`).
    private var outputListeners: [ListenerToken] = []

    public static func bootstrapLogging(level: Logger.Level) {
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
    static func socketDescription(options: KioskConfig.Control, inheritedListenFD: Int32?) -> String {
        let explicit = options.socket ?? ProcessInfo.processInfo.environment["KIOSKD_SOCKET"]
        if explicit == "none" { return "none (disabled)" }
        let path = explicit ?? ControlServerOptions.defaultSocketPath
        return inheritedListenFD != nil ? "\(path) (from systemd)" : path
    }

    /// Starts the control socket, or returns nil when it is disabled. A socket path given explicitly (option or
    /// KIOSKD_SOCKET) must work or kioskd fails; the default one is best effort, because a kiosk that cannot
    /// offer its socket (another instance, a read-only /run) should still show its display.
    static func start(options: KioskConfig.Control, inheritedListenFD: Int32? = nil, loop: MainLoop, outputs: KioskOutputs,
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
            let wiring = try ControlWiring(server: server, loop: loop, outputs: outputs)
            if let directory = options.screenshotDirectory { wiring.screenshotDirectory = ScreenshotDirectory(directory) }
            return wiring
        } catch {
            guard explicit == nil else { throw error }
            logger.error("\(error); running without a control socket")
            return nil
        }
    }

    private static func resolveGroup(_ name: String) throws -> UInt32 {
        if let gid = UInt32(name) { return gid }
        guard let entry = getgrnam(name) else { throw KioskConfigurationError("--socket-group \(name): no such group") }
        return entry.pointee.gr_gid
    }

    private init(server: ControlServer, loop: MainLoop, outputs: KioskOutputs) throws {
        self.server = server
        self.loop = loop
        self.outputs = outputs
        self.jobs = try BackgroundJobs(loop: loop, label: "kioskd.control.jobs")
        // The registry keeps its handlers: a handler must not hold the registry, the outputs or the loop, or they
        // outlive the kiosk (its loop's descriptors with them). `self` is unowned: the wiring outlives its server.
        let commands = server.commands
        commands.register(.version) { [unowned commands] _, _ in
            ["version": .string(kioskdVersion), "protocol": 1, "commands": .array(commands.acceptedNames.map(JSONValue.string))]
        }
        commands.register(.stats) { [unowned self] _, _ in
            // The initializer's parameters of the same names would be captured strongly: read the wiring's own.
            let outputs = self.outputs, loop = self.loop, server = self.server
            // The first output's figures at the top level, each output's under `by_output`.
            let first = outputs.first, display = first.engine.backend
            var stats = try ControlWiring.statsValue(flips: liveStats(), engine: first.engine.stats, info: display?.info, loop: loop,
                                                     rotation: first.rotation, poweredOn: display?.isPoweredOn ?? false,
                                                     pacing: display?.flipPacing ?? .vblank)
            // The control socket's own load, beside the `--stats-out` counters.
            if case .object(var members) = stats {
                members["control_clients"] = .int(Int64(server.connections.count))
                members["display_connected"] = .bool(display != nil)
                if let clockTrust { members["clock_synchronized"] = .bool(clockTrust.read()) }
                members["outputs"] = outputsListing()
                members["by_output"] = try statsByOutput(first: stats)
                if let dataSourceStats { members["data_sources"] = dataSourceStats() }
                if let vncStats { members["vnc"] = vncStats() }
                if let syncStats { members["sync"] = syncStats() }
                if let verifier = verifier(of: first) { members.merge(verifier.statsMembers) { _, verify in verify } }
                if let remoteAssets { members["cache"] = remoteAssets.cacheStats }
                members.merge(statusExtras()) { _, extra in extra }
                members.merge(videoStats()) { _, video in video }
                members.merge(webStats()) { _, web in web }
                stats = .object(members)
            }
            return stats
        }
        commands.register(.logLevel, arguments: ["level"]) { args, _ in
            if args["level"] != nil {
                let name = try args.string("level")
                guard let level = Logger.Level(rawValue: name) else {
                    throw ControlError.invalidArgument("log.level: unknown level '\(name)'; one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                runtimeLogLevel.withLock { $0 = level }
            }
            return ["level": .string(runtimeLogLevel.withLock { $0 }.rawValue)]
        }
        registerOutputCommands()
        registerSceneCommands()
        registerVideoCommands()
        registerWebCommands()
        registerPlayCommands()
        registerCacheCommands()
        hookOutputs()
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

    /// Forwards every output's completed flips (`flip`), presents that changed its screen (`frame`), frame-path
    /// faults (`error`, as failed renders are) and scene events to subscribers, each with the output's name. Data is
    /// the kiosk's: its change is told once, from the first output's stage.
    private func hookOutputs() {
        outputListeners = outputs.outputs.flatMap { output -> [ListenerToken] in [
            output.engine.addFlipListener { [weak self, unowned output] event in self?.flipped(event, on: output) },
            output.engine.addPresentListener { [weak self, unowned output] damage in self?.presented(damage: damage, on: output) },
            output.engine.addFaultListener { [weak self, unowned output] fault in
                self?.broadcast("error", ["code": .string(fault.code.rawValue), "message": .string(fault.message)], on: output)
            },
            output.stage.addEventListener { [weak self, unowned output] event in
                guard let self else { return }
                if case .dataChanged = event, output !== outputs.first { return }
                let (name, data) = Self.eventMessage(event)
                broadcast(name, data, on: output)
            },
        ] }
    }

    /// Sends `event` with `data` and the output's name (`output`) to its subscribers.
    private func broadcast(_ event: String, _ data: JSONValue, on output: DrivenOutput) {
        guard server.hasSubscribers(event), case .object(var members) = data else { return }
        members["output"] = .string(output.name)
        server.broadcast(event: event, data: .object(members))
    }

    private func flipped(_ event: FlipEvent, on output: DrivenOutput) {
        broadcast("flip", ["sequence": .int(Int64(clamping: event.sequence)),
                           "timestamp_ns": .int(Int64(clamping: event.timestamp.nanoseconds)),
                           "fingerprint": output.engine.screenFingerprint.map { .string($0.hex) } ?? .null], on: output)
    }

    private func presented(damage: [Rect], on output: DrivenOutput) {
        let number = (framesPresented[ObjectIdentifier(output)] ?? 0) + 1
        framesPresented[ObjectIdentifier(output)] = number
        broadcast("frame", ["frame": .int(number), "damage_rects": .int(Int64(damage.count)),
                            "timestamp_ns": .int(Int64(clamping: loop.now.nanoseconds))], on: output)
    }

    func stop() { server.stop() }
}
