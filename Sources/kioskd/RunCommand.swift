import ArgumentParser
import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import Logging

enum BackendKind: String, ExpressibleByArgument, CaseIterable {
    case auto, drm, fbdev, headless
}

extension CommitChoice: ExpressibleByArgument {}

extension ModeRequest: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// `--mode`'s parser: the error says which part of the text is wrong.
func parseModeOption(_ text: String) throws -> ModeRequest {
    do { return try ModeRequest(validating: text) } catch let error as ModeRequestError {
        throw ValidationError(error.message)
    }
}

enum StrategyChoice: String, ExpressibleByArgument, CaseIterable {
    case roundRobin = "round-robin", priority
    var poolStrategy: RenderQueuePool.Strategy { self == .priority ? .priority : .roundRobin }
}

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Drive a display: set the mode and flip frames on vblank until stopped (SIGTERM/SIGINT).")

    @Option(help: ArgumentHelp("The config file (YAML); its keys are defaults that the options given here override.", valueName: "FILE"))
    var config: String?

    @Option(help: "Display backend: auto (the default: drm, or fbdev when there is no DRM card but a framebuffer device), drm (a KMS device), fbdev (a Linux framebuffer device) or headless (memory buffers, simulated vblank).")
    var backend: BackendKind?

    @Option(help: ArgumentHelp("The framebuffer device of --backend fbdev (and of auto without a DRM card); default: /dev/fb0.", valueName: "path"))
    var fbdev: String?

    @Option(help: "Board file (YAML) choosing driver or device, connector, mode, commit, buffers, rotation, backlight and touch calibration (input); options given here override it.")
    var board: String?

    @Option(help: "DRM card node, or auto for the first card with a connected display.")
    var device: String?

    @Option(help: "Use the first card whose kernel driver has this name (vc4, vkms, i915).")
    var driver: String?

    @Option(help: "Connector name (HDMI-A-1, DSI-1, Virtual-1); default: the first connected.")
    var connector: String?

    @Option(help: "Mode as WxH, WxH@Hz or WxH@59.94 (the connector's mode nearest that refresh); default: the connector's preferred mode (headless: 1024x768@60).",
            transform: parseModeOption)
    var mode: ModeRequest?

    @Option(help: "Commit API: atomic, legacy (SetCrtc + PageFlip) or auto (default).")
    var commit: CommitChoice?

    @Option(help: "Number of scanout buffers: 2 (default) or 3.")
    var buffers: Int?

    @Option(help: ArgumentHelp("Output rotation in degrees clockwise: 0 (default), 90, 180 or 270; at 90 the scene's top is along the panel's right edge.",
                               valueName: "degrees"),
            transform: { text in
                guard let rotation = OutputRotation(parsing: text) else {
                    throw ValidationError("--rotation \(text): must be one of \(OutputRotation.allowedValues)")
                }
                return rotation
            })
    var rotation: OutputRotation?

    @Option(help: "Stop after this many flipped frames.")
    var frames: Int?

    @Option(help: "Write frame statistics as JSON to this file at exit.")
    var statsOut: String?

    @Option(help: "Save the last frame put on screen as PNG at exit (read from the scanout buffer).")
    var screenshot: String?

    @Option(help: "Save the last frame as the CRTC produced it, read back through a writeback connector, as PNG (DRM, atomic, needs --frames).")
    var capture: String?

    @Option(help: ArgumentHelp("At every page change, once its transition has ended, save the frame as the CRTC produced it, read back through a writeback connector, as DIR/NNNN-PAGE.png (DRM, atomic).", valueName: "DIR"))
    var capturePages: String?

    @Option(help: ArgumentHelp("The scene file to show (YAML or JSON), or default for the bundled dashboard scene; without it /etc/kioskd/scene.yaml when it exists, else the bundled scene.", valueName: "FILE|default"))
    var scene: String?

    @Flag(inversion: .prefixedNo, help: "Reload the scene file when it changes (inotify); an invalid version leaves the current scene on screen. Default: on.")
    var watch: Bool?

    @Flag(inversion: .prefixedNo, help: "Show a diagnostic page for a missing or invalid scene and keep running until it is fixed, instead of exiting. Default: on, except for a --scene given on the command line.")
    var keepGoing: Bool?

    @Option(help: "Render queue strategy of the layer engine: round-robin (default) or priority.")
    var renderStrategy: StrategyChoice?

    @Flag(inversion: .prefixedNo, help: "Add the scene's fps widget (frames per second, frame time) on top of every page.")
    var fpsOverlay: Bool?

    @Option(help: "While something animates, present each frame this long before the vblank rather than as soon as it is composed, so a render that lands meanwhile is shown at that vblank: off (the default), auto (a quarter of the refresh period, at least 4 ms), or milliseconds. The lead widens while presents go out late, and a late present or a missed vblank closes the window for a while.")
    var repaintWindow: String?

    @OptionGroup var log: LogOptions

    @OptionGroup var control: ControlOptions

    @OptionGroup var input: InputOptions

    /// `--repaint-window` (or the config's `repaint_window`), off when neither says.
    var repaintWindowMode: RepaintWindow.Mode { repaintWindow.flatMap(RepaintWindow.Mode.init) ?? .off }

    /// Where a scene is looked for when `--scene` is not given; the bundled default scene when it is absent.
    static let systemScene = "/etc/kioskd/scene.yaml"

    /// The scene file shown: `--scene`, else the system's scene file, else the bundled default scene.
    private func scenePath() throws -> String {
        if let scene, scene != "default" { return scene }
        if scene == nil, PathNames.exists(Self.systemScene) { return Self.systemScene }
        guard let path = BundledScenes.defaultScene else {
            throw DisplayError("the default scene is missing: kioskd_KioskRuntime.resources must be installed next to the kioskd binary (or give --scene FILE)")
        }
        return path
    }

    func validate() throws {
        if let buffers, !(2...3).contains(buffers) { throw ValidationError("--buffers \(buffers): must be 2 or 3") }
        if let frames, frames < 1 { throw ValidationError("--frames \(frames): must be at least 1") }
        if let repaintWindow, RepaintWindow.Mode(repaintWindow) == nil {
            throw ValidationError("--repaint-window \(repaintWindow): expected auto, off, or the lead before the vblank in milliseconds (0 to 999)")
        }
        if capture != nil {
            guard backend != .headless, backend != .fbdev else { throw ValidationError("--capture needs --backend drm (writeback is a DRM feature)") }
            guard commit != .legacy else { throw ValidationError("--capture needs atomic commits; drop --commit legacy") }
            guard frames != nil else { throw ValidationError("--capture captures the last of --frames N; give --frames") }
        }
        if capturePages != nil {
            guard backend != .headless, backend != .fbdev else { throw ValidationError("--capture-pages needs --backend drm (writeback is a DRM feature)") }
            guard commit != .legacy else { throw ValidationError("--capture-pages needs atomic commits; drop --commit legacy") }
        }
    }

    func run() throws {
        // A peer that hangs up (a control client, the journal's stream on stderr while journald restarts) makes a
        // write fail with EPIPE, never kills kioskd. Inherited across the exec that starts kioskd over.
        signal(SIGPIPE, SIG_IGN)
        MallocArenas.limitUnlessConfigured()
        let resolved = try resolvedRun()
        let options = resolved.options
        ControlWiring.bootstrapLogging(level: options.log.logLevel ?? .info)
        let logger = Logger(label: "kioskd")
        for warning in resolved.warnings { logger.warning("\(warning)") }
        if let problem = resolved.problem {
            logger.error("\(problem); showing the diagnostic page until it is fixed and kioskd reloaded: \(problem.error)")
        }
        do {
            try options.runDisplay(resolved, logger: logger)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error)
        }
    }

    /// Board file and options merged: options given on the command line win.
    struct Settings {
        var device: String?
        var driver: String?
        var connector: String?
        var mode: ModeRequest?
        var commit: CommitChoice
        var buffers: Int
        var rotation: OutputRotation
        var scenePath: String
        var backlight: String?
        /// The board file's `input:` calibration and device map.
        var boardInput: InputDeviceRules
    }

    /// One path for every scene: resolve options, open the display, build the engine and the stage, wire the
    /// control socket and signals, run, write the outputs. With a configuration problem, the diagnostic page on
    /// one output instead of the scene, and a reload starts kioskd over.
    private func runDisplay(_ resolved: ResolvedRun, logger: Logger) throws {
        let (fleet, memory, video, config, problem) = (resolved.fleet, resolved.memory, resolved.video, resolved.outputs, resolved.problem)
        let loop = try MainLoop.epoll()
        // Before any other thread starts, so render threads inherit the blocked mask and signals reach signalfd.
        let signals = try SignalRouting(loop: loop, logger: logger)
        let settings = try resolveSettings(board: resolved.board, logger: logger)
        let service = try ServiceWiring(loop: loop)
        let backendKind = BackendKind.resolve(backend, fbdev: fbdev, drmRequested: settings.driver != nil || (settings.device ?? "auto") != "auto",
                                              logger: logger)
        if !config.isEmpty && problem == nil {
            return try runOutputs(config, loop: loop, signals: signals, settings: settings, service: service, backendKind: backendKind,
                                  fleet: fleet, memory: memory, video: video, logger: logger)
        }
        guard var opened = try openDisplay(backendKind, settings, logger: logger) else { return }
        var display = opened.backend
        // The last frame of --frames N is captured: the N-th present is the frame the N-th flip shows.
        let capturing = capture != nil || capturePages != nil
        var capturer = try !capturing ? nil : (display as? DRMBackend).map(WritebackCapturer.init(backend:))
        if let frames, capture != nil { try capturer?.capturePresent(number: frames) }

        let pool = RenderQueuePool(strategy: (renderStrategy ?? .roundRobin).poolStrategy)
        let rotation = settings.rotation
        var output = try display.map { ($0, try ShadowCompositor(size: $0.info.mode.size, rotation: rotation) as any Compositing) }
        // With nothing connected, the scene is laid out for the mode asked for (else 1024x768) until a display comes.
        let waitingPanel = settings.mode.map { Size(width: $0.width, height: $0.height) } ?? Size(width: 1024, height: 768)
        let runner = try SceneRunner(loop: loop, output: output, waitingSize: rotation.sceneSize(forPanel: waitingPanel), pool: pool,
                                     path: settings.scenePath, watch: watch ?? true, fpsOverlay: fpsOverlay ?? false, memory: memory, video: video,
                                     substitute: diagnosticPage(socket: ControlWiring.socketDescription(
                                         options: control, inheritedListenFD: service.controlSocketFD)),
                                     problem: problem, logger: logger)
        runner.engine.repaintWindowMode = repaintWindowMode
        let controlSocket = try ControlWiring.start(options: control, inheritedListenFD: service.controlSocketFD, loop: loop,
                                                    scene: runner.stage, logger: logger)
        controlSocket?.rotation = settings.rotation
        defer { controlSocket?.stop() }
        let session = RunSession(engine: runner.engine, frameLimit: frames, controlSocket: controlSocket)
        session.stopOnSignals(signals)
        runner.follow(signals, logger: logger)
        let fatal = FatalFrameExit(engines: [runner.engine], loop: loop)
        service.attach(runner: runner, session: session, signals: signals)
        if problem != nil { service.startOverOnReload(signals, session: session, logger: logger) }
        let outputs = try opened.source.map { source in
            try OutputWiring(source: source, engine: runner.engine, attached: display, rotation: rotation,
                             control: controlSocket, service: service)
        }
        let pageCaptures = try capturePages.map { try PageCaptures(directory: $0, engine: runner.engine, stage: runner.stage, logger: logger) }
        pageCaptures?.capturer = capturer
        // --capture follows the output: a display adopted later is captured at the N-th present on it.
        if capturing {
            outputs?.manager.prepareOutput = { [capture, frames] backend in
                guard let drm = backend as? DRMBackend else { return }
                capturer = try WritebackCapturer(backend: drm)
                if let frames, capture != nil { try capturer?.capturePresent(number: frames) }
                pageCaptures?.capturer = capturer
            }
        }
        let fleetWiring = try FleetWiring.start(fleet, loop: loop, control: controlSocket, stage: runner.stage, logger: logger)
        defer { fleetWiring?.stop() }
        let panel = display?.info.mode.size ?? waitingPanel
        let inputWiring = InputWiring(settings: input.settings(backend: backendKind, backlight: settings.backlight, board: settings.boardInput),
                                      stage: runner.stage, display: display, panel: panel, output: display?.info.connector ?? "none",
                                      rotation: settings.rotation, control: controlSocket, logger: logger)
        inputWiring.fleet = fleetWiring?.client
        inputWiring.start()
        PlaneWiring.follow(runner.engine, rotation: settings.rotation, logger: logger)
        outputs?.onDetached = { [weak inputWiring] in inputWiring?.outputDetached() }
        outputs?.onAdopted = { [weak inputWiring, weak engine = runner.engine, rotation = settings.rotation] info in
            inputWiring?.follow(info, display: engine?.backend)
            if let engine { PlaneWiring.follow(engine, rotation: rotation, logger: logger) }
        }
        // The engine owns the output from here on: one unplugged must be freed (its card closed, DRM master let
        // go) before the next display can be opened.
        (display, output, opened.backend) = (nil, nil, nil)
        try session.run()
        if service.startingOver {
            runner.engine.stop()
            try StartOver.exec(passing: service.activation)
        }

        let shown = runner.engine.backend
        var problems = writePictures(display: shown, captured: capturer?.lastCapture)
        if let failure = fatal.failure { problems.insert(failure, at: 0) }
        let pacing = shown?.flipPacing ?? .vblank
        runner.engine.stop()
        let report = RunStatsReport(flips: session.flips, info: shown?.info, loop: loop, rotation: settings.rotation,
                                    poweredOn: shown?.isPoweredOn ?? false, firstFrameMs: session.firstCompleteFrameMs, pacing: pacing)
        logger.info("\(report.framesFlipped) frames flipped on \(report.connector) \(report.mode) (\(report.commitApi)), missed vblanks \(report.missedVblanks), flip interval p50 \(report.flipIntervalMs.p50) ms p99 \(report.flipIntervalMs.p99) ms")
        if let statsOut {
            do { try report.write(to: statsOut, engine: runner.engine.stats, extra: RunStatsReport.videoFigures(runner.stage)) } catch { problems.append("\(error)") }
        }
        withExtendedLifetime((pool, runner, session, service, inputWiring, outputs, pageCaptures, fatal)) {}
        if !problems.isEmpty { throw DisplayError(problems.joined(separator: "; ")) }
    }

    private func resolveSettings(board boardFile: BoardConfig, logger: Logger) throws -> Settings {
        if let name = boardFile.name { logger.info("board \(name) (\(board ?? ""))") }
        let settings = Settings(
            device: device ?? boardFile.device,
            driver: device == nil ? (driver ?? boardFile.driver) : driver,
            connector: connector ?? boardFile.connector,
            mode: mode ?? boardFile.mode,
            commit: commit ?? boardFile.commit ?? .auto,
            buffers: buffers ?? boardFile.buffers ?? 2,
            rotation: rotation ?? boardFile.rotation ?? .degrees0,
            scenePath: try scenePath(), backlight: boardFile.backlight, boardInput: boardFile.input)
        if settings.commit == .legacy && (capture != nil || capturePages != nil) {
            throw DisplayError("\(capture != nil ? "--capture" : "--capture-pages") needs atomic commits, but the commit API is legacy")
        }
        return settings
    }

    /// What `openDisplay` found: the output to drive (nil when nothing is connected), and on DRM the source later
    /// outputs come from.
    struct OpenedDisplay {
        var backend: (any DisplayBackend)?
        var source: DRMOutputSource?
    }

    /// The output to drive, or nil when a stop signal came while waiting for DRM master. On DRM with the
    /// connectors asked for all disconnected, no output: kioskd runs and waits for one. A choice that cannot work
    /// (no such device, driver or connector, a mode the display lacks) fails at start, as before.
    private func openDisplay(_ kind: BackendKind, _ settings: Settings, logger: Logger) throws -> OpenedDisplay? {
        switch kind {
        case .fbdev:
            return OpenedDisplay(backend: try FbdevBackend(path: fbdev ?? BackendKind.defaultFramebuffer, bufferCount: settings.buffers),
                                 source: nil)
        case .drm, .auto:
            let options = DRMOptions(device: settings.device == "auto" ? nil : settings.device, driver: settings.driver,
                                     connector: settings.connector, mode: settings.mode, commit: settings.commit,
                                     bufferCount: settings.buffers)
            let source = DRMOutputSource(options: options)
            if DRMOutputSource.shouldWait(for: try source.probe(), connector: options.connector) {
                return OpenedDisplay(backend: nil, source: source)
            }
            guard let drm = try DRMStartup.open(options, logger: logger) else { return nil }
            return OpenedDisplay(backend: drm, source: source)
        case .headless:
            let m = settings.mode ?? ModeRequest(width: 1024, height: 768, refreshHz: 60)
            let mode = DisplayMode(width: m.width, height: m.height, refreshMilliHz: m.refreshMilliHz ?? 60_000)
            return OpenedDisplay(backend: try HeadlessBackend(mode: mode, bufferCount: settings.buffers), source: nil)
        }
    }

    /// `--screenshot` and `--capture`, written after the run; returns what went wrong, one line each.
    func writePictures(display: (any DisplayBackend)?, captured: WritebackCapture?) -> [String] {
        var problems: [String] = []
        let size = display?.info.mode.size ?? Size(width: 0, height: 0)
        if let screenshot {
            if let pixels = display?.frontBufferSnapshot() {
                do { try writePNG(xrgb8888: pixels, size: size, stride: size.width * 4, to: screenshot) } catch { problems.append("\(error)") }
            } else {
                problems.append("screenshot \(screenshot): no frame was shown")
            }
        }
        if let capture {
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
}
