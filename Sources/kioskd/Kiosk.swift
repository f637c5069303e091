import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import Logging

/// One `kioskd run`, assembled in one place: the loop, the render pool, the outputs (one slot each, a list of one
/// without an `outputs:` section), their scenes, the control socket, the fleet, input, the service and the run
/// session. Every output comes up the same way and is heard the same way: SIGHUP reloads each one's scene, the
/// watchdog watches each one's frame path, `flip`, `frame`, `display`, scene and error events and the MQTT state name
/// each output, `--capture-pages` captures each one's page changes. What speaks of one output (`--frames`,
/// `--screenshot`, `--capture`, `--stats-out`, the top level of `stats` and `display.info`, the service's readiness)
/// speaks of the first. With a configuration problem, every output shows the diagnostic page and a reload starts
/// kioskd over. Main thread.
final class Kiosk {
    let loop: MainLoop
    let signals: SignalRouting
    let service: ServiceWiring
    let pool: RenderQueuePool
    let outputs: KioskOutputs
    let control: ControlWiring?
    let session: RunSession
    let fleet: FleetWiring?
    let input: InputWiring
    private let fatal: FatalFrameExit
    private let pageCaptures: [PageCaptures]
    /// The first output's writeback capturer, for `--capture`'s last frame.
    private var capturer: WritebackCapturer?
    private let options: RunCommand
    private let logger: Logger

    /// Builds the kiosk `resolved` describes; nothing is shown until `run`.
    /// - Throws: a choice of output that cannot work (no such card, driver or connector, a mode the display lacks),
    ///   a control socket asked for that cannot be served, an `mqtt:` section that cannot be used.
    init(_ resolved: ResolvedRun, logger: Logger) throws {
        let options = resolved.options
        self.options = options
        self.logger = logger
        let problem = resolved.problem
        loop = try MainLoop.epoll()
        // Before any other thread starts, so render threads inherit the blocked mask and signals reach signalfd.
        signals = try SignalRouting(loop: loop, logger: logger)
        let settings = try options.resolveSettings(board: resolved.board, logger: logger)
        service = try ServiceWiring(loop: loop)
        let kind = BackendKind.resolve(options.backend, fbdev: options.fbdev,
                                       drmRequested: settings.driver != nil || (settings.device ?? "auto") != "auto", logger: logger)
        // A configuration problem shows its page on one output: the `outputs:` section may be what is wrong.
        let configured = problem == nil ? resolved.outputs : []
        if !configured.isEmpty, let connector = settings.connector {
            logger.warning("connector \(connector): ignored, the outputs: section names the connectors")
        }
        let entries = KioskOutputs.entries(configured, connector: settings.connector, mode: settings.mode, rotation: settings.rotation,
                                           scenePath: settings.scenePath)
        guard entries.count == 1 || kind != .fbdev else {
            throw DisplayError("outputs: several outputs need --backend drm or headless; fbdev drives one framebuffer")
        }
        pool = RenderQueuePool(strategy: (options.renderStrategy ?? .roundRobin).poolStrategy)
        let substitute = options.diagnosticPage(socket: ControlWiring.socketDescription(options: options.control,
                                                                                       inheritedListenFD: service.controlSocketFD))
        outputs = try KioskOutputs(entries: entries, loop: loop, pool: pool, hotplug: kind == .drm || kind == .auto, source: { entry in
            try Self.source(kind, entry: entry, settings: settings, fbdev: options.fbdev)
        }, runner: { [memory = resolved.memory, video = resolved.video] engine, path in
            engine.repaintWindowMode = options.repaintWindowMode
            return try SceneRunner(engine: engine, path: path, watch: options.watch ?? true, fpsOverlay: options.fpsOverlay ?? false,
                                   memory: memory, video: video, substitute: substitute, problem: problem, logger: logger)
        }, logger: logger)
        let first = outputs.first
        control = try ControlWiring.start(options: options.control, inheritedListenFD: service.controlSocketFD, loop: loop,
                                          outputs: outputs, logger: logger)
        session = RunSession(engine: first.engine, frameLimit: options.frames, controlSocket: control)
        session.stopOnSignals(signals)
        // Each output's runner reloads its own scene on SIGHUP and hands its own engine over.
        for output in outputs.outputs { output.runner.follow(signals, logger: logger) }
        fatal = FatalFrameExit(engines: outputs.outputs.map(\.engine), loop: loop)
        let driven = outputs.outputs
        pageCaptures = try options.capturePages.map { directory in
            try driven.map { try PageCaptures(directory: directory, output: $0, logger: logger) }
        } ?? []
        fleet = try FleetWiring.start(resolved.fleet, loop: loop, control: control, outputs: outputs, logger: logger)
        input = InputWiring(settings: options.input.settings(backend: kind, backlight: settings.backlight, board: settings.boardInput),
                            outputs: outputs.outputs, control: control, logger: logger)
        input.fleet = fleet?.client
        showsProblem = problem != nil
        wireOutputs()
    }

    /// A configuration problem is shown: a reload starts kioskd over.
    private let showsProblem: Bool

    /// The source one output comes from, and what it found at start. On DRM a choice that cannot work fails here.
    private static func source(_ kind: BackendKind, entry: KioskOutputs.Entry, settings: RunCommand.Settings,
                               fbdev: String?) throws -> (any OutputSource, OutputProbe) {
        switch kind {
        case .drm, .auto:
            let source = DRMOutputSource(options: DRMOptions(
                device: settings.device == "auto" ? nil : settings.device, driver: settings.driver, connector: entry.connector,
                mode: entry.mode, commit: settings.commit, bufferCount: settings.buffers))
            return (source, try source.checkChoice())
        case .headless:
            let m = entry.mode ?? ModeRequest(width: 1024, height: 768, refreshHz: 60)
            let source = HeadlessOutputSource(connector: entry.connector ?? "Headless-1",
                                              mode: DisplayMode(width: m.width, height: m.height, refreshMilliHz: m.refreshMilliHz ?? 60_000),
                                              bufferCount: settings.buffers)
            return (source, try source.probe())
        case .fbdev:
            let source = FbdevOutputSource(path: fbdev ?? BackendKind.defaultFramebuffer, bufferCount: settings.buffers)
            return (source, try source.probe())
        }
    }

    /// What follows each output's display as it comes and goes: `display` events, the service's status, touch
    /// mapping and the cursor plane, overlay planes, and the writeback capturer of `--capture` and `--capture-pages`.
    private func wireOutputs() {
        let capturing = options.capture != nil || options.capturePages != nil
        for (index, output) in outputs.outputs.enumerated() {
            guard capturing else { break }
            let captures = pageCaptures.isEmpty ? nil : pageCaptures[index]
            let lastFrame = index == 0 && options.capture != nil ? options.frames : nil
            // Made as each display is adopted, before it starts: the last frame of --frames N is the N-th present.
            output.manager.prepareOutput = { [weak self] backend in
                guard let drm = backend as? DRMBackend else { return }
                let capturer = try WritebackCapturer(backend: drm)
                if let lastFrame { try capturer.capturePresent(number: lastFrame) }
                captures?.capturer = capturer
                if index == 0 { self?.capturer = capturer }
            }
        }
        outputs.onDetached = { [weak input] output in input?.outputDetached(output) }
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
    /// - Throws: `DisplayError` with every problem of the run, one after another.
    func run() throws {
        outputs.start()
        // Once the outputs have probed: an output with nothing connected is ready at once, waiting.
        service.attach(outputs: outputs, session: session, signals: signals)
        if showsProblem { service.startOverOnReload(signals, session: session, logger: logger) }
        input.start()
        defer {
            control?.stop()
            fleet?.stop()
        }
        try session.run(startingEngine: false)
        if service.startingOver {
            outputs.stop()
            try StartOver.exec(passing: service.activation)
        }

        let first = outputs.first, shown = first.engine.backend
        var problems = options.writePictures(display: shown, captured: capturer?.lastCapture)
        if let failure = fatal.failure { problems.insert(failure, at: 0) }
        let pacing = shown?.flipPacing ?? .vblank
        outputs.stop()
        let report = RunStatsReport(flips: session.flips, info: shown?.info, loop: loop, rotation: first.rotation,
                                    poweredOn: shown?.isPoweredOn ?? false, firstFrameMs: session.firstCompleteFrameMs, pacing: pacing)
        for output in outputs.outputs {
            let figures = output === first ? report : RunStatsReport(flips: output.flips, info: output.engine.backend?.info, loop: loop)
            logger.info("\(figures.framesFlipped) frames flipped on \(output.name) \(figures.mode) (\(figures.commitApi)), missed vblanks \(figures.missedVblanks), flip interval p50 \(figures.flipIntervalMs.p50) ms p99 \(figures.flipIntervalMs.p99) ms")
        }
        if let statsOut = options.statsOut {
            do { try report.write(to: statsOut, engine: first.engine.stats, extra: RunStatsReport.videoFigures(first.stage)) } catch { problems.append("\(error)") }
        }
        withExtendedLifetime((pool, pageCaptures)) {}
        if !problems.isEmpty { throw DisplayError(problems.joined(separator: "; ")) }
    }

    /// Ends the run at the next frame boundary, as SIGTERM does.
    func stop() {
        session.requestStop()
    }
}
