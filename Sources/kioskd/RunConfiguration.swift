import ArgumentParser
import Foundation
import KioskControl
import KioskCore
import KioskDisplay
import KioskRuntime
import KioskScene
import Logging

/// `kioskd run` with its config file: the file's keys fill every option not given on the command line.
extension RunCommand {
    /// The config file read: `--config FILE` (which must exist), else `/etc/kioskd/kioskd.yaml` when it exists.
    var configPath: String? {
        if let config { return config }
        return PathNames.exists(KioskConfig.defaultPath) ? KioskConfig.defaultPath : nil
    }

    /// These options over the config file, the file's warnings (reserved sections), its `mqtt:` section with the
    /// file it came from, its `memory:` section and its `outputs:` entries (none of them has options).
    /// - Throws: `ExitCode(1)` after printing the file's located errors, one a line, on stderr.
    func withConfigFile() throws -> (RunCommand, [SceneDiagnostic], FleetWiring.Configuration?, KioskConfig.Memory, [KioskConfig.Output]) {
        var merged = self
        var warnings: [SceneDiagnostic] = []
        var fleet: FleetWiring.Configuration?
        var memory = KioskConfig.Memory()
        var outputs: [KioskConfig.Output] = []
        if let path = configPath {
            do {
                let loaded = try ConfigLoader.load(path: path)
                merged.fill(from: loaded.config)
                warnings = loaded.warnings
                fleet = loaded.config.mqtt.map { FleetWiring.Configuration(settings: $0, file: path) }
                memory = loaded.config.memory
                outputs = loaded.config.outputs
            } catch {
                for diagnostic in error.diagnostics { FileHandle.standardError.write(Data("kioskd: \(diagnostic)\n".utf8)) }
                throw ExitCode(1)
            }
        }
        // A scene given on the command line is a person at a terminal: a bad one should fail loudly. Anywhere
        // else (the config file, /etc/kioskd/scene.yaml) kioskd is a kiosk, and a kiosk never goes black.
        if merged.keepGoing == nil { merged.keepGoing = scene == nil }
        try merged.validate()
        try merged.input.validate()
        return (merged, warnings, fleet, memory, outputs)
    }

    /// Takes every value the command line left unset from `config`.
    mutating func fill(from config: KioskConfig) {
        scene = scene ?? config.scene
        board = board ?? config.board
        backend = backend ?? config.backend.flatMap { BackendKind(rawValue: $0.rawValue) }
        fbdev = fbdev ?? config.fbdev
        // A device or a driver on the command line replaces the file's choice of card as a whole.
        if device == nil && driver == nil {
            device = config.device
            driver = config.driver
        }
        connector = connector ?? config.connector
        mode = mode ?? config.mode
        commit = commit ?? config.commit.flatMap { CommitChoice(rawValue: $0.rawValue) }
        buffers = buffers ?? config.buffers
        rotation = rotation ?? config.rotation
        frames = frames ?? config.frames
        statsOut = statsOut ?? config.statsOut
        screenshot = screenshot ?? config.screenshot
        capture = capture ?? config.capture
        watch = watch ?? config.watch
        keepGoing = keepGoing ?? config.keepGoing
        renderStrategy = renderStrategy ?? config.renderStrategy.flatMap { StrategyChoice(rawValue: $0.rawValue) }
        fpsOverlay = fpsOverlay ?? config.fpsOverlay
        repaintWindow = repaintWindow ?? config.repaintWindow?.description
        log.logLevel = log.logLevel ?? config.logLevel.flatMap { Logger.Level(rawValue: $0.rawValue) }
        control.socket = control.socket ?? config.control.socket
        control.socketGroup = control.socketGroup ?? config.control.socketGroup
        control.allowUIDs += config.control.allowUIDs
        control.allowGIDs += config.control.allowGIDs
        control.screenshotDir = control.screenshotDir ?? config.control.screenshotDirectory
        input.fill(from: config)
    }

    /// With `--keep-going`, what shows a scene that cannot be shown: the diagnostic page.
    func diagnosticPage(scenePath: String, socket: String) -> ((any Error) throws -> Scene)? {
        guard keepGoing == true else { return nil }
        return { error in try DiagnosticPage.scene(scenePath: scenePath, error: error, version: kioskdVersion, socket: socket) }
    }
}

/// `kioskd check-config [FILE]`: validates a config file (and the board file and outputs' scene files it names)
/// without touching the
/// display. Prints `ok` after any warnings and exits 0, or every error one a line on stderr and exits 1. Runs on
/// the main thread of a short-lived process.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config file (default /etc/kioskd/kioskd.yaml) without touching the display.")

    @Argument(help: "The config file.")
    var file: String = KioskConfig.defaultPath

    func run() throws {
        let standardError = FileHandle.standardError
        do {
            let loaded = try ConfigLoader.load(path: file)
            for warning in loaded.warnings { standardError.write(Data("\(warning)\n".utf8)) }
            if let board = loaded.config.board {
                do { _ = try BoardConfig.load(path: board) } catch {
                    standardError.write(Data("\(error)\n".utf8))
                    throw ExitCode(1)
                }
            }
            // Each output's own scene file; which connectors exist only a run can tell.
            for output in loaded.config.outputs {
                guard let scene = output.scene, scene != "default" else { continue }
                let checked = try SceneLoader.load(path: scene, limits: loaded.config.memory.sceneLimits)
                for warning in checked.warnings { standardError.write(Data("\(warning)\n".utf8)) }
            }
            print("ok")
        } catch let error as SceneValidationError {
            for diagnostic in error.diagnostics { standardError.write(Data("\(diagnostic)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}
