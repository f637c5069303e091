import ArgumentParser
import CSystemd
import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import Logging

enum BackendKind: String, ExpressibleByArgument, CaseIterable {
    case drm, headless
}

extension CommitChoice: ExpressibleByArgument {}

extension ModeRequest: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// What `kioskd run` shows: a scene file, or one of the built-in pictures.
enum SceneChoice: ExpressibleByArgument, Equatable {
    /// The bundled default scene (`scenes/dashboard.yaml`).
    case `default`
    /// The reference dashboard built in Swift, which `kioskd bench` also measures against a naive renderer.
    case reference
    /// A full-frame clock drawn straight into the scanout buffers (no layer engine).
    case clock
    case file(String)

    init?(argument: String) {
        switch argument {
        case "default": self = .default
        case "reference": self = .reference
        case "clock": self = .clock
        case "": return nil
        default: self = .file(argument)
        }
    }

    static var allValueStrings: [String] { ["default", "reference", "clock", "FILE"] }
}

enum StrategyChoice: String, ExpressibleByArgument, CaseIterable {
    case roundRobin = "round-robin", priority
    var poolStrategy: RenderQueuePool.Strategy { self == .priority ? .priority : .roundRobin }
}

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Drive a display: set the mode and flip frames on vblank until stopped (SIGTERM/SIGINT).")

    @Option(help: "Display backend: drm (a KMS device) or headless (memory buffers, simulated vblank).")
    var backend: BackendKind = .drm

    @Option(help: "Board file (YAML) choosing driver or device, connector, mode, commit and buffers; options given here override it.")
    var board: String?

    @Option(help: "DRM card node, or auto for the first card with a connected display.")
    var device: String?

    @Option(help: "Use the first card whose kernel driver has this name (vc4, vkms, i915).")
    var driver: String?

    @Option(help: "Connector name (HDMI-A-1, DSI-1, Virtual-1); default: the first connected.")
    var connector: String?

    @Option(help: "Mode as WxH or WxH@Hz; default: the connector's preferred mode (headless: 1024x768@60).")
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

    @Option(help: ArgumentHelp("What to show: a scene file (YAML or JSON; default /etc/kioskd/scene.yaml when it exists), default (the bundled dashboard scene), reference (the built-in reference dashboard) or clock (a full-frame clock drawn directly).", valueName: "FILE|default|reference|clock"))
    var scene: SceneChoice?

    @Flag(inversion: .prefixedNo, help: "Reload the scene file when it changes (inotify); an invalid version leaves the current scene on screen.")
    var watch = true

    @Option(help: "Render queue strategy of the layer engine: round-robin or priority.")
    var renderStrategy: StrategyChoice = .roundRobin

    @Flag(help: "Show an FPS / frame-time overlay (dashboard scene).")
    var fpsOverlay = false

    @OptionGroup var log: LogOptions

    @OptionGroup var control: ControlOptions

    /// The scene file `--scene` names, or the bundled default scene.
    /// Where a scene is looked for when `--scene` is not given; the bundled default scene when it is absent.
    static let systemScene = "/etc/kioskd/scene.yaml"

    /// What to show: `--scene`, else the system's scene file, else the bundled default scene.
    private var sceneChoice: SceneChoice {
        scene ?? (FileManager.default.fileExists(atPath: Self.systemScene) ? .file(Self.systemScene) : .default)
    }

    private func scenePath() throws -> String {
        switch sceneChoice {
        case .file(let path): return path
        default:
            guard let path = BundledScenes.defaultScene else {
                throw DisplayError("the default scene is missing: kioskd_KioskRuntime.resources must be installed next to the kioskd binary (or give --scene FILE)")
            }
            return path
        }
    }

    func validate() throws {
        if let buffers, !(2...3).contains(buffers) { throw ValidationError("--buffers \(buffers): must be 2 or 3") }
        if let frames, frames < 1 { throw ValidationError("--frames \(frames): must be at least 1") }
        if capture != nil {
            guard backend == .drm else { throw ValidationError("--capture needs --backend drm (writeback is a DRM feature)") }
            guard commit != .legacy else { throw ValidationError("--capture needs atomic commits; drop --commit legacy") }
            guard frames != nil else { throw ValidationError("--capture captures the last of --frames N; give --frames") }
        }
    }

    func run() throws {
        ControlWiring.bootstrapLogging(level: log.logLevel)
        let logger = Logger(label: "kioskd")
        do {
            try runDisplay(logger: logger)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail(error)
        }
    }

    private func runDisplay(logger: Logger) throws {
        let loop = try MainLoop.epoll()
        // Before any other thread starts, so render threads inherit the blocked mask and signals reach signalfd.
        var stopHandler: (() -> Void)?
        var reloadHandler: (() -> Void)?
        var handoverHandler: ((Int32) -> Void)?
        try loop.onSignals([SIGTERM, SIGINT, SIGHUP] + MasterHandover.signals) { signal in
            if MasterHandover.signals.contains(signal) {
                handoverHandler?(signal)
            } else if signal == SIGHUP {
                if let reload = reloadHandler {
                    logger.notice("SIGHUP: reloading the scene file")
                    reload()
                } else {
                    logger.notice("SIGHUP: nothing to reload (no scene file is shown)")
                }
            } else {
                logger.notice("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): stopping at the next frame boundary")
                stopHandler?()
            }
        }

        let boardFile = try board.map(BoardConfig.load(path:)) ?? BoardConfig()
        let device = self.device ?? boardFile.device
        let driver = self.device == nil ? (self.driver ?? boardFile.driver) : self.driver
        let mode = self.mode ?? boardFile.mode
        let commit = self.commit ?? boardFile.commit ?? .auto
        let buffers = self.buffers ?? boardFile.buffers ?? 2
        let rotation = self.rotation ?? boardFile.rotation ?? .degrees0
        let scene = sceneChoice
        if rotation != .degrees0 && scene == .clock {
            throw DisplayError("rotation \(rotation): the clock scene draws straight into scanout buffers and cannot be rotated; use another scene or rotation 0")
        }
        if let name = boardFile.name { logger.info("board \(name) (\(board ?? ""))") }
        if commit == .legacy && capture != nil {
            throw DisplayError("--capture needs atomic commits, but the commit API is legacy")
        }

        let display: DisplayBackend
        var drm: DRMBackend?
        switch backend {
        case .drm:
            let options = DRMOptions(device: device == "auto" ? nil : device, driver: driver,
                                     connector: connector ?? boardFile.connector, mode: mode,
                                     commit: commit, bufferCount: buffers, enableWriteback: capture != nil)
            guard let d = try DRMStartup.open(options, logger: logger) else { return }
            drm = d
            display = d
        case .headless:
            let m = mode ?? ModeRequest(width: 1024, height: 768, refreshHz: 60)
            let headlessMode = DisplayMode(width: m.width, height: m.height, refreshMilliHz: (m.refreshHz ?? 60) * 1000)
            display = try HeadlessBackend(mode: headlessMode, bufferCount: buffers)
        }

        let controlSocket = try ControlWiring.start(options: control, loop: loop, display: display, logger: logger)
        controlSocket?.rotation = rotation
        defer { controlSocket?.stop() }

        var captured: WritebackCapture?
        var flips = FlipStatistics()
        var engineStats: EngineStats?
        var failure: String?
        let notifyReady = {
            // systemd Type=notify: ready once a frame is really on screen, not merely once we started.
            _ = sd_notify(0, "READY=1\nSTATUS=showing \(display.info.connector) \(display.info.mode)")
        }

        // The last frame of --frames N is captured: the N-th present is the frame the N-th flip shows.
        if capture != nil, let frames { try drm?.capturePresent(number: frames) }

        switch scene {
        case .clock:
            let pump = DemoFramePump(loop: loop, backend: display, frameLimit: frames) { buffer in
                try display.present(buffer, damage: nil)
            }
            pump.onFinished = { loop.stop() }
            pump.onFirstFlip = notifyReady
            stopHandler = { pump.requestStop() }
            controlSocket?.liveStats = { [weak pump] in (pump?.flips ?? FlipStatistics(), nil) }
            try display.start(on: loop) { event in
                pump.flipCompleted(event)
                controlSocket?.flipped(event)
            }
            try pump.start()
            loop.run()
            pump.drainRenderThread()
            captured = drm?.lastCapture
            flips = pump.flips
            failure = pump.failure

        case .default, .file, .reference:
            let pool = RenderQueuePool(strategy: renderStrategy.poolStrategy)
            let engine: LayerEngine
            var sceneRunner: SceneRunner?
            var dashboard: DashboardRunner?
            if scene == .reference {
                dashboard = try DashboardRunner(loop: loop, backend: display, pool: pool, rotation: rotation, fpsOverlay: fpsOverlay)
                engine = dashboard!.engine
            } else {
                let path = try scenePath()
                let compositor = try ShadowCompositor(size: display.info.mode.size, rotation: rotation)
                let runner = try SceneRunner(loop: loop, backend: display, compositor: compositor, pool: pool, path: path,
                                             watch: watch, fpsOverlay: fpsOverlay, logger: logger)
                reloadHandler = { [weak runner] in runner?.reload() }
                controlSocket?.scene = runner.stage
                sceneRunner = runner
                engine = runner.engine
            }
            var stopping = false
            // The engine presents the next frame from inside the flip that ends the run, and stopping the display
            // completes that flip: it is past the end and not counted.
            var finished = false
            engine.onFlip = { event in
                guard !finished else { return }
                flips.record(event)
                controlSocket?.flipped(event)
                if flips.framesFlipped == 1 { notifyReady() }
                if let frames, flips.framesFlipped >= frames { stopping = true }
                if stopping {
                    finished = true
                    loop.stop()
                }
            }
            stopHandler = {
                // Stop at the next flip, a frame boundary; with nothing on the way, now.
                stopping = true
                if !display.isFlipPending { loop.stop() }
            }
            controlSocket?.liveStats = { [weak engine] in (flips, engine?.stats) }
            controlSocket?.engine = engine
            FatalFrameExit.install(on: engine, loop: loop) { failure = $0 }
            handoverHandler = { MasterHandover.handle($0, engine: engine, drm: drm, logger: logger) }
            // --frames N counts flips, and a still scene causes none: keep the display link ticking (unchanged
            // frames are presented) until the count is reached.
            let counting = ClockBox(0)
            if frames != nil { engine.addAnimation(target: counting) { _, _ in !finished } }
            try engine.start()
            loop.run()
            captured = drm?.lastCapture
            engineStats = engine.stats
            withExtendedLifetime((pool, sceneRunner, dashboard, counting)) {}
        }

        var problems: [String] = []
        if let screenshot {
            if let pixels = display.frontBufferSnapshot() {
                do {
                    try writePNG(xrgb8888: pixels, size: display.info.mode.size, stride: display.info.mode.width * 4, to: screenshot)
                } catch { problems.append("\(error)") }
            } else {
                problems.append("screenshot \(screenshot): no frame was shown")
            }
        }
        if let capture {
            if let captured {
                do {
                    let pixels = try captured.waitForPixels()
                    try writePNG(xrgb8888: pixels, size: display.info.mode.size, stride: display.info.mode.width * 4, to: capture)
                } catch { problems.append("\(error)") }
            } else {
                problems.append("capture \(capture): the last frame was never presented")
            }
        }
        display.stop()

        let report = RunStatsReport(flips: flips, info: display.info, loop: loop, rotation: rotation, poweredOn: display.isPoweredOn)
        logger.info("\(report.framesFlipped) frames flipped on \(report.connector) \(report.mode) (\(report.commitApi)), missed vblanks \(report.missedVblanks), flip interval p50 \(report.flipIntervalMs.p50) ms p99 \(report.flipIntervalMs.p99) ms")
        if let statsOut { try report.write(to: statsOut, engine: engineStats) }
        if let failure { problems.insert(failure, at: 0) }
        if !problems.isEmpty { throw DisplayError(problems.joined(separator: "; ")) }
    }
}
