import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskPlays
import KioskScene
import Logging

/// One `kioskd run`, assembled in one place: the loop, the render pool, the outputs (one slot each, a list of one
/// without an `outputs:` section), their scenes, the control socket, the fleet, input, the service and the run
/// session. Every output comes up the same way and is heard the same way: SIGHUP reloads each one's scene, the
/// watchdog watches each one's frame path, `flip`, `frame`, `display`, scene and error events and the MQTT state name
/// each output, `--capture-pages` captures each one's page changes. What speaks of one output (`--frames`,
/// `--screenshot`, `--capture`, `--stats-out`, the top level of `stats` and `output.info`, the service's readiness)
/// speaks of the first. With a configuration problem, every output shows the diagnostic page and a reload starts
/// kioskd over. Main thread.
public final class Kiosk {
    let loop: MainLoop
    let signals: SignalRouting
    let service: ServiceWiring
    let pool: RenderQueuePool
    let outputs: KioskOutputs
    let control: ControlWiring?
    let session: RunSession
    let fleet: FleetWiring?
    /// The scene's HTTP and RSS data sources.
    let dataSources: DataSourceWiring
    /// Images named by URL.
    let remoteAssets: RemoteAssetWiring
    /// Scenes named by URL.
    let remoteScenes: RemoteSceneWiring
    let input: InputWiring
    /// Whether the wall clock is synchronized, for schedules, `stats` and the MQTT state.
    let clockTrust: ClockTrust
    private var clockListener: ListenerToken?
    /// Proof of play, when there is a store to record into.
    let plays: PlayRecorder?
    /// Proof of play over MQTT, when both are there.
    let playDelivery: PlayDelivery?
    /// `<prefix>/thumbnail`, with `mqtt.thumbnail_every`.
    let thumbnails: ThumbnailPublisher?
    /// The remote view, with `vnc:`.
    let vnc: VNCWiring?
    private let fatal: FatalFrameExit
    private let pageCaptures: [PageCaptures]
    /// Each output's scanout verification (`health.verify_every`, `output.verify`), in the outputs' order.
    let verifiers: [ScanoutVerifier]
    /// The first output's writeback capturer, for `--capture`'s last frame.
    private var capturer: WritebackCapturer?
    public let configuration: KioskConfiguration
    private let logger: Logger

    /// Builds the kiosk `resolved` describes; nothing is shown until `run`.
    /// - Throws: a choice of output that cannot work (no such card, driver or connector, a mode the display lacks),
    ///   a control socket asked for that cannot be served, an `mqtt:` section that cannot be used.
    public convenience init(_ resolved: ResolvedRun, logger: Logger) throws {
        try self.init(resolved, logger: logger, loop: try MainLoop.epoll(), pool: nil)
    }

    /// Builds the kiosk on `loop` (a manual one in tests, whose clock the test moves) and `pool` (nil makes one with
    /// the configured strategy).
    init(_ resolved: ResolvedRun, logger: Logger, loop: MainLoop, pool: RenderQueuePool?) throws {
        let configuration = resolved.configuration, settings = configuration.settings
        self.configuration = configuration
        self.logger = logger
        let problem = resolved.problem
        if let name = configuration.boardName { logger.info("board \(name) (\(settings.board ?? ""))") }
        self.loop = loop
        // Before any other thread starts, so render threads inherit the blocked mask and signals reach signalfd.
        signals = try SignalRouting(loop: loop, logger: logger)
        service = try ServiceWiring(loop: loop)
        let kind = KioskConfig.Backend.resolve(settings.backend, fbdev: settings.fbdev, drmRequested: configuration.drmRequested, logger: logger)
        // A configuration problem shows its page on one output: the `outputs:` section may be what is wrong.
        let configured = problem == nil ? settings.outputs : []
        if !configured.isEmpty, let connector = settings.connector {
            logger.warning("connector \(connector): ignored, the outputs: section names the connectors")
        }
        let entries = KioskOutputs.entries(configured, connector: settings.connector, mode: settings.mode, rotation: configuration.rotation,
                                           scenePath: try Self.scenePath(settings.scene), wall: settings.wall)
        guard entries.count == 1 || kind != .fbdev else {
            throw OutputError("outputs: several outputs need --backend drm or headless; fbdev drives one framebuffer")
        }
        self.pool = pool ?? RenderQueuePool(strategy: configuration.renderStrategy.poolStrategy)
        let socket = ControlWiring.socketDescription(options: settings.control, inheritedListenFD: service.controlSocketFD)
        let substitute = Self.diagnosticPage(keepGoing: configuration.keepGoing, socket: socket)
        // A scene named by URL with no copy yet shows the diagnostic page until it arrives, keep-going or not.
        let remoteSubstitute = Self.diagnosticPage(keepGoing: true, socket: socket)
        // Once for the process, before any output's scene can make a page (WebKit reads it at its first page).
        WebWiring.configure(settings.web)
        outputs = try KioskOutputs(entries: entries, loop: loop, pool: self.pool, hotplug: kind == .drm || kind == .auto, source: { entry in
            try Self.source(kind, entry: entry, configuration: configuration)
        }, runner: { engine, entry in
            let path = entry.scenePath
            engine.repaintWindowMode = configuration.repaintWindow
            engine.screenHealth = settings.health.settings
            return try SceneRunner(engine: engine, path: path, wall: entry.wall, watch: configuration.watch, fpsOverlay: configuration.fpsOverlay,
                                   memory: settings.memory, video: settings.video, cacheDirectory: settings.cache.directory,
                                   webHangTimeout: configuration.webHangTimeout,
                                   substitute: substitute ?? (RemoteAsset.isFetched(path) ? remoteSubstitute : nil), problem: problem, logger: logger)
        }, logger: logger)
        let first = outputs.first
        control = try ControlWiring.start(options: settings.control, inheritedListenFD: service.controlSocketFD, loop: loop,
                                          outputs: outputs, logger: logger)
        control?.allowsWebEval = settings.web.allowEval ?? false
        session = RunSession(engine: first.engine, frameLimit: settings.frames, controlSocket: control)
        session.stopOnSignals(signals)
        // Each output's runner reloads its own scene on SIGHUP and hands its own engine over.
        for output in outputs.outputs { output.runner.follow(signals, logger: logger) }
        fatal = FatalFrameExit(engines: outputs.outputs.map(\.engine), loop: loop)
        let driven = outputs.outputs
        pageCaptures = try configuration.capturePages.map { directory in
            try driven.map { try PageCaptures(directory: directory, output: $0, logger: logger) }
        } ?? []
        let imagesDirectory = configuration.stateDirectory.map { ($0 as NSString).appendingPathComponent("scanout") }
        let mainLoop = loop
        verifiers = try driven.map { output in
            let verifier = try ScanoutVerifier(engine: output.engine, name: output.name, loop: mainLoop,
                                               every: settings.health.settings.verifyEvery, imagesDirectory: imagesDirectory, logger: logger)
            verifier.corruptionHookEnabled = configuration.verifyCorruptComposed
            return verifier
        }
        control?.verifiers = verifiers
        fleet = try FleetWiring.start(resolved.fleet, loop: loop, control: control, outputs: outputs, logger: logger)
        dataSources = DataSourceWiring(loop: loop, outputs: outputs, control: control, logger: logger)
        remoteAssets = RemoteAssetWiring(loop: loop, outputs: outputs, control: control, settings: settings.cache, logger: logger)
        remoteScenes = RemoteSceneWiring(loop: loop, outputs: outputs, assets: remoteAssets, control: control, logger: logger)
        control?.remoteScenes = remoteScenes
        input = InputWiring(settings: InputSettings(configuration, backend: kind),
                            outputs: outputs.outputs, control: control, logger: logger)
        input.fleet = fleet?.client
        clockTrust = ClockTrust(source: configuration.clockSynchronizedFile.map(ClockSynchronization.flagFile) ?? .system(), loop: loop,
                                stages: outputs.outputs.map(\.stage), logger: logger)
        control?.clockTrust = clockTrust
        clockListener = clockTrust.addChangeListener { [weak fleet] _ in fleet?.client.stateMayHaveChanged() }
        plays = PlayRecording.start(path: configuration.playsDatabase, outputs: outputs.outputs, loop: loop, logger: logger)
        if let plays, let client = fleet?.client {
            let delivery = PlayDelivery(store: plays.store, fleet: client, loop: loop, firstOfRun: plays.firstSequenceOfRun, logger: logger)
            plays.onRecord = { [unowned delivery] _ in delivery.recorded() }
            playDelivery = delivery
        } else {
            playDelivery = nil
        }
        if let client = fleet?.client, let every = client.settings.thumbnailEverySeconds {
            thumbnails = try ThumbnailPublisher(settings: client.settings, every: every, fleet: client, outputs: outputs.outputs,
                                                loop: loop, logger: logger)
        } else {
            thumbnails = nil
        }
        // A configuration problem is shown instead (an unreadable password file among them): no remote view then.
        if let vncSettings = settings.vnc, problem == nil {
            vnc = try VNCWiring(settings: vncSettings, password: resolved.vncPassword, tls: resolved.vncTLS, outputs: driven, input: input, control: control,
                                loop: loop, logger: logger)
        } else {
            vnc = nil
        }
        for (verifier, output) in zip(verifiers, outputs.outputs) {
            verifier.cursorOnPlane = { [weak input, unowned output] in input?.cursorShownOnPlane(of: output) ?? false }
        }
        control?.playsPath = plays?.store.path
        showsProblem = problem != nil
        wireOutputs()
    }

    /// A configuration problem is shown: a reload starts kioskd over.
    private let showsProblem: Bool

    /// The source one output comes from, and what it found at start. On DRM a choice that cannot work fails here.
    private static func source(_ kind: KioskConfig.Backend, entry: KioskOutputs.Entry,
                               configuration: KioskConfiguration) throws -> (any OutputSource, OutputProbe) {
        switch kind {
        case .drm, .auto:
            let source = DRMOutputSource(options: DRMOptions(
                device: configuration.device, driver: configuration.settings.driver, connector: entry.connector,
                mode: entry.mode, commit: configuration.commit, bufferCount: configuration.buffers))
            return (source, try source.checkChoice())
        case .headless:
            let m = entry.mode ?? ModeRequest(width: 1024, height: 768, refreshHz: 60)
            let source = HeadlessOutputSource(connector: entry.connector ?? "Headless-1",
                                              mode: OutputMode(width: m.width, height: m.height, refreshMilliHz: m.refreshMilliHz ?? 60_000),
                                              bufferCount: configuration.buffers)
            return (source, try source.probe())
        case .fbdev:
            let source = FbdevOutputSource(path: configuration.settings.fbdev ?? KioskConfig.Backend.defaultFramebuffer,
                                           bufferCount: configuration.buffers)
            return (source, try source.probe())
        }
    }

    /// Where a scene is looked for when none is given; the bundled default scene when it is absent.
    static let systemScene = "/etc/kioskd/scene.yaml"

    /// The scene file shown: the one given, else the system's scene file, else the bundled default scene (also
    /// for `default`).
    static func scenePath(_ scene: String?) throws -> String {
        if let scene, scene != "default" { return scene }
        if scene == nil, PathNames.exists(systemScene) { return systemScene }
        guard let path = BundledScenes.defaultScene else {
            throw OutputError("the default scene is missing: kioskd_KioskRuntime.resources must be installed next to the kioskd binary (or give --scene FILE)")
        }
        return path
    }

    /// With keep-going, what shows a scene (or a configuration) that cannot be shown: the diagnostic page.
    static func diagnosticPage(keepGoing: Bool, socket: String) -> SceneRunner.Substitute? {
        guard keepGoing else { return nil }
        return { subject, error in try DiagnosticPage.scene(for: subject, error: error, version: kioskdVersion, socket: socket) }
    }

    /// What follows each output's display as it comes and goes: `display` events, the service's status, touch
    /// mapping and the cursor plane, overlay planes, and the writeback capturer of scanout verification, `--capture`
    /// and `--capture-pages`.
    private func wireOutputs() {
        let capture = configuration.settings.capture, frames = configuration.settings.frames
        let capturing = capture != nil || configuration.capturePages != nil
        for (index, output) in outputs.outputs.enumerated() {
            let captures = pageCaptures.isEmpty ? nil : pageCaptures[index]
            let lastFrame = index == 0 && capture != nil ? frames : nil
            let verifier = verifiers[index], loop = self.loop
            // Made as each display is adopted, before it starts: the last frame of --frames N is the N-th present.
            // Without a writeback connector (or atomic commits) verification is unavailable, with the reason;
            // --capture and --capture-pages need one and fail the output instead.
            output.manager.prepareOutput = { [weak self] backend in
                guard let drm = backend as? DRMBackend else {
                    verifier.adopt(nil, reason: "connector \(backend.info.connector): the \(backend.info.commitAPI.rawValue) backend has no writeback connector")
                    return
                }
                let capturer: WritebackCapturer
                do {
                    capturer = try WritebackCapturer(backend: drm)
                } catch {
                    verifier.adopt(nil, reason: "\(error)")
                    if capturing { throw error }
                    return
                }
                if let lastFrame { try capturer.capturePresent(number: lastFrame) }
                captures?.capturer = capturer
                if index == 0 { self?.capturer = capturer }
                verifier.adopt(try WritebackReadback(capturer: capturer, loop: loop, outputName: backend.info.connector), reason: "")
            }
        }
        outputs.onDetached = { [weak input, weak self] output in
            input?.outputDetached(output)
            // Let go of the capturer, whose captures hold the card open.
            self?.verifiers.first { $0.engine === output.engine }?.adopt(nil, reason: "no display is connected")
        }
        outputs.onEvent = { [weak control, weak service, weak input, logger] output, event in
            control?.outputChanged(event, on: output)
            service?.outputChanged()
            switch event {
            case .connected(let info), .modeChanged(let info):
                input?.follow(output, info: info)
                PlaneWiring.follow(output.engine, rotation: output.rotation, logger: logger)
            case .disconnected: break
            }
        }
    }

    /// Shows every output, runs until stopped (SIGTERM, SIGINT, `--frames`, `stop`, a fatal frame-path error), then
    /// writes `--screenshot`, `--capture` and `--stats-out`. A reload with a configuration problem shown starts
    /// kioskd over instead of returning.
    /// - Throws: `OutputError` with every problem of the run, one after another.
    public func run() throws {
        start()
        defer { stopServing() }
        try session.run(startingEngine: false)
        if service.startingOver {
            outputs.stop()
            try StartOver.exec(passing: service.activation)
        }
        try finish()
    }

    /// Brings every output up and starts the service, input and the run session's counting, without turning the
    /// loop: `run` turns it until the run ends; a test turns it itself.
    func start() {
        outputs.start()
        // Once the outputs have probed: an output with nothing connected is ready at once, waiting.
        service.attach(outputs: outputs, session: session, signals: signals)
        if showsProblem { service.startOverOnReload(signals, session: session, logger: logger) }
        input.start()
        session.begin()
    }

    /// Closes the control socket and stops the fleet, the data sources and the remote assets and scenes.
    func stopServing() {
        control?.stop()
        fleet?.stop()
        dataSources.stop()
        remoteAssets.stop()
        remoteScenes.stop()
    }

    /// After the loop stopped: writes `--screenshot`, `--capture` and `--stats-out`, stops the outputs and logs each
    /// one's figures.
    /// - Throws: `OutputError` with every problem of the run, one after another.
    func finish() throws {
        let first = outputs.first, shown = first.engine.backend
        var problems = writePictures(display: shown, captured: capturer?.lastCapture)
        if let failure = fatal.failure { problems.insert(failure, at: 0) }
        let pacing = shown?.flipPacing ?? .vblank
        plays?.stop()
        outputs.stop()
        let report = RunStatsReport(flips: session.flips, info: shown?.info, loop: loop, rotation: first.rotation,
                                    poweredOn: shown?.isPoweredOn ?? false, firstFrameMs: session.firstCompleteFrameMs, pacing: pacing)
        for output in outputs.outputs {
            let figures = output === first ? report : RunStatsReport(flips: output.flips, info: output.engine.backend?.info, loop: loop)
            logger.info("\(figures.framesFlipped) frames flipped on \(output.name) \(figures.mode) (\(figures.commitApi)), missed vblanks \(figures.missedVblanks), flip interval p50 \(figures.flipIntervalMs.p50) ms p99 \(figures.flipIntervalMs.p99) ms")
        }
        if let statsOut = configuration.settings.statsOut {
            do { try report.write(to: statsOut, engine: first.engine.stats, extra: RunStatsReport.videoFigures(first.stage)) } catch { problems.append("\(error)") }
        }
        withExtendedLifetime((pool, pageCaptures)) {}
        if !problems.isEmpty { throw OutputError(problems.joined(separator: "; ")) }
    }

    /// `--screenshot` and `--capture`, written after the run; returns what went wrong, one line each.
    private func writePictures(display: (any DisplayBackend)?, captured: WritebackCapture?) -> [String] {
        var problems: [String] = []
        let size = display?.info.mode.size ?? Size(width: 0, height: 0)
        if let screenshot = configuration.settings.screenshot {
            if let pixels = display?.frontBufferSnapshot() {
                do { try writePNG(xrgb8888: pixels, size: size, stride: size.width * 4, to: screenshot) } catch { problems.append("\(error)") }
            } else {
                problems.append("screenshot \(screenshot): no frame was shown")
            }
        }
        if let capture = configuration.settings.capture {
            if let captured {
                do {
                    try writePNG(xrgb8888: try captured.waitForPixels(), size: size, stride: size.width * 4, to: capture)
                } catch { problems.append("\(error)") }
            } else {
                problems.append("capture \(capture): the last frame was never presented")
            }
        }
        return problems
    }

    /// Ends the run at the next frame boundary, as SIGTERM does.
    public func stop() {
        session.requestStop()
    }
}
