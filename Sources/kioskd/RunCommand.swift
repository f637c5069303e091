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

    @Option(help: ArgumentHelp("At every page change, once its transition has ended, save the frame as the CRTC produced it, read back through a writeback connector, as DIR/CONNECTOR/NNNN-PAGE.png, one folder per output (DRM, atomic).", valueName: "DIR"))
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

    @Option(help: "While something animates, present each frame this long before the vblank rather than as soon as it is composed, so a render that lands meanwhile is shown at that vblank: auto (the default: a quarter of the refresh period, at least 4 ms), off, or milliseconds. The lead widens while presents go out late, and the window closes for a while after a missed vblank.")
    var repaintWindow: String?

    @OptionGroup var log: LogOptions

    @OptionGroup var control: ControlOptions

    @OptionGroup var input: InputOptions

    /// `--repaint-window` (or the config's `repaint_window`), auto when neither says.
    var repaintWindowMode: RepaintWindow.Mode { repaintWindow.flatMap(RepaintWindow.Mode.init) ?? .auto }

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
            try Kiosk(resolved, logger: logger).run()
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

    /// The board file under these options: options given on the command line win.
    /// - Throws: `DisplayError` when a capture asks for atomic commits and the commit API is legacy.
    func resolveSettings(board boardFile: BoardConfig, logger: Logger) throws -> Settings {
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
