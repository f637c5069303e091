import ArgumentParser
import Foundation
import Glibc
import KioskApp
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import Logging

extension KioskConfig.Backend: ExpressibleByArgument {}

extension CommitChoice: ExpressibleByArgument {}

extension KioskConfig.RenderStrategy: ExpressibleByArgument {}

extension ModeRequest: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// `--mode`'s parser: the error says which part of the text is wrong.
func parseModeOption(_ text: String) throws -> ModeRequest {
    do { return try ModeRequest(validating: text) } catch let error as ModeRequestError {
        throw ValidationError(error.message)
    }
}

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Drive a display: set the mode and flip frames on vblank until stopped (SIGTERM/SIGINT).")

    @Option(help: ArgumentHelp("The config file (YAML); its keys are defaults that the options given here override.", valueName: "FILE"))
    var config: String?

    @Option(help: "Display backend: auto (the default: drm, or fbdev when there is no DRM card but a framebuffer device), drm (a KMS device), fbdev (a Linux framebuffer device) or headless (memory buffers, simulated vblank).")
    var backend: KioskConfig.Backend?

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

    @Option(help: ArgumentHelp("Proof of play: the SQLite file records of what was shown go to (default: plays.db in $STATE_DIRECTORY, which the unit's StateDirectory= sets; none without it).", valueName: "FILE"))
    var playsDb: String?

    @Option(help: ArgumentHelp("A file whose existence says the wall clock is synchronized, in place of the kernel's NTP state and systemd-timesyncd's flag (for tests).", valueName: "FILE", visibility: .hidden))
    var clockSynchronizedFile: String?

    @Flag(help: ArgumentHelp("Accept output.verify's corrupt_composed argument, which spoils the copy of the composed frame compared so the verification reports scanout_mismatch (for tests).", visibility: .hidden))
    var verifyCorruptComposed = false

    @Option(help: ArgumentHelp("How long a web widget's page may leave a ping, sent every half of it, unanswered before its web process is ended, in place of 10 s (for tests).", valueName: "SECONDS", visibility: .hidden))
    var webHangTimeout: Double?

    @Option(help: ArgumentHelp("The scene file to show (YAML or JSON), an https:// or http:// URL of one (fetched into the asset cache, revalidated every 60 s and at SIGHUP, shown from the cache offline), or default for the bundled dashboard scene; without it /etc/kioskd/scene.yaml when it exists, else the bundled scene.", valueName: "FILE|URL|default"))
    var scene: String?

    @Flag(inversion: .prefixedNo, help: "Reload the scene file when it changes (inotify); an invalid version leaves the current scene on screen. Default: on.")
    var watch: Bool?

    @Flag(inversion: .prefixedNo, help: "Show a diagnostic page for a missing or invalid scene and keep running until it is fixed, instead of exiting. Default: on, except for a --scene given on the command line.")
    var keepGoing: Bool?

    @Option(help: "Render queue strategy of the layer engine: round-robin (default) or priority.")
    var renderStrategy: KioskConfig.RenderStrategy?

    @Flag(inversion: .prefixedNo, help: "Add the scene's fps widget (frames per second, frame time) on top of every page.")
    var fpsOverlay: Bool?

    @Option(help: "While something animates, present each frame this long before the vblank rather than as soon as it is composed, so a render that lands meanwhile is shown at that vblank: off (the default), auto (a quarter of the refresh period, at least 4 ms), or milliseconds. The lead widens while presents go out late; a present that misses its vblank or nearly does closes the window for a while.")
    var repaintWindow: String?

    @OptionGroup var log: LogOptions

    @OptionGroup var control: ControlOptions

    @OptionGroup var input: InputOptions

    func validate() throws {
        if let webHangTimeout, !(webHangTimeout >= 0.2 && webHangTimeout <= 3600) {
            throw ValidationError("--web-hang-timeout \(webHangTimeout): expected seconds from 0.2 to 3600")
        }
        if let repaintWindow, RepaintWindow.Mode(repaintWindow) == nil {
            throw ValidationError("--repaint-window \(repaintWindow): expected auto, off, or the lead before the vblank in milliseconds (0 to 999)")
        }
    }

    /// The options given, as a source of settings beside the config file and the board file
    /// (`KioskConfiguration.resolve`).
    var commandLine: KioskConfig {
        var c = KioskConfig()
        c.scene = scene
        c.board = board
        c.backend = backend
        c.fbdev = fbdev
        c.device = device
        c.driver = driver
        c.connector = connector
        c.mode = mode
        c.commit = commit
        c.buffers = buffers
        c.rotation = rotation
        c.frames = frames
        c.statsOut = statsOut
        c.screenshot = screenshot
        c.capture = capture
        c.watch = watch
        c.keepGoing = keepGoing
        c.renderStrategy = renderStrategy
        c.fpsOverlay = fpsOverlay
        c.repaintWindow = repaintWindow.flatMap(RepaintWindow.Mode.init)
        c.logLevel = log.logLevel.flatMap { KioskConfig.LogLevel(rawValue: $0.rawValue) }
        c.control = control.layer
        (c.input, c.idle) = (input.layer, input.idleLayer)
        return c
    }

    func run() throws {
        // A peer that hangs up (a control client, the journal's stream on stderr while journald restarts) makes a
        // write fail with EPIPE, never kills kioskd. Inherited across the exec that starts kioskd over.
        signal(SIGPIPE, SIG_IGN)
        MallocArenas.limitUnlessConfigured()
        let resolved = try resolvedRun()
        let level = resolved.configuration.settings.logLevel.flatMap { Logger.Level(rawValue: $0.rawValue) }
        ControlWiring.bootstrapLogging(level: level ?? .info)
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
}
