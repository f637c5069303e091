import ArgumentParser
import Foundation
import KioskApp
import KioskControl
import KioskCore
import KioskDisplay
import KioskRuntime
import KioskScene
import Logging

/// `kioskd run` with its config file and board file: the three sources resolved into one `KioskConfiguration`.
extension RunCommand {
    /// The config file read: `--config FILE` (which must exist), else `/etc/kioskd/kioskd.yaml` when it exists.
    var configPath: String? {
        if let config { return config }
        return PathNames.exists(KioskConfig.defaultPath) ? KioskConfig.defaultPath : nil
    }

    /// These options over the config file over the board file (`KioskConfiguration.resolve`), with the MQTT password
    /// file read: everything a run reads before its loop starts. A file that cannot be used fails the run (its
    /// located errors on stderr), or, where keep-going was asked for, becomes the run's `problem`: the run then goes
    /// on without what that file gave, and shows the diagnostic page. Keep-going for the config file itself can only
    /// come from the command line; for the board and password files the config file's `keep_going` counts too. The
    /// default keep-going of a run without `--scene` covers scenes only: `kioskd run` at a terminal still fails on a
    /// bad file.
    /// - Throws: `ExitCode(1)` after printing the problem on stderr, one line each; `ValidationError` for settings
    ///   that cannot work together.
    func resolvedRun() throws -> ResolvedRun {
        var run = ResolvedRun()
        let commandLine = self.commandLine
        var configFile = KioskConfig()
        if let path = configPath {
            do {
                let loaded = try ConfigLoader.load(path: path)
                configFile = loaded.config
                run.warnings = loaded.warnings
                run.fleet = loaded.config.mqtt.map { FleetWiring.Configuration(settings: $0, file: path, sync: loaded.config.sync) }
            } catch {
                guard keepGoing == true else {
                    for diagnostic in error.diagnostics { FileHandle.standardError.write(Data("kioskd: \(diagnostic)\n".utf8)) }
                    throw ExitCode(1)
                }
                run.problem = ConfigurationProblem(subject: .configFile(path), error: error)
            }
        }
        let keepGoingAsked = (keepGoing ?? configFile.keepGoing) == true
        var boardFile = BoardConfig()
        if run.problem == nil, let path = board ?? configFile.board {
            do {
                boardFile = try BoardConfig.load(path: path)
            } catch {
                guard keepGoingAsked else { throw fail(error) }
                run.problem = ConfigurationProblem(subject: .boardFile(path), error: error)
            }
        }
        if run.problem == nil, let fleet = run.fleet {
            do {
                run.fleet?.password = try fleet.settings.password()
            } catch {
                guard keepGoingAsked else { throw fail(error) }
                run.fleet = nil
                run.problem = ConfigurationProblem(subject: .passwordFile(fleet.settings.passwordFile ?? ""), error: error)
            }
        }
        if run.problem == nil, let vnc = configFile.vnc {
            do {
                run.vncPassword = try vnc.password()
            } catch {
                guard keepGoingAsked else { throw fail(error) }
                run.problem = ConfigurationProblem(subject: .vncPasswordFile(vnc.passwordFile ?? ""), error: error)
            }
        }
        if run.problem == nil, let vnc = configFile.vnc, let tls = vnc.tls {
            do {
                run.vncTLS = try ResolvedRun.vncCredentials(vnc)
            } catch {
                guard keepGoingAsked else { throw fail(error) }
                let file = error.diagnostics.first?.path == "vnc.tls.key" ? tls.keyFile : tls.certificateFile
                run.problem = ConfigurationProblem(subject: .vncTLSFile(file), error: error)
            }
        }
        var configuration = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: boardFile)
        configuration.capturePages = capturePages
        configuration.clockSynchronizedFile = clockSynchronizedFile
        // systemd sets STATE_DIRECTORY to the unit's StateDirectory= folders, colon-separated: the first is kioskd's.
        let stateDirectory = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
        configuration.playsDatabase = playsDb ?? stateDirectory.map { $0 + "/plays.db" }
        configuration.stateDirectory = stateDirectory
        configuration.verifyCorruptComposed = verifyCorruptComposed
        configuration.backlightDirectory = input.backlightDir
        // A scene given on the command line is a person at a terminal: a bad one should fail loudly. Anywhere
        // else (the config file, /etc/kioskd/scene.yaml) kioskd is a kiosk, and a kiosk never goes black.
        if configuration.settings.keepGoing == nil { configuration.settings.keepGoing = scene == nil }
        do { try configuration.validate() } catch { throw ValidationError(error.description) }
        try InputOptions.validate(configuration.settings.idle)
        run.configuration = configuration
        return run
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
                // A scene by URL is validated by the run that fetches it.
                guard let scene = output.scene, scene != "default", !RemoteAsset.isFetched(scene) else { continue }
                let checked = try SceneLoader.load(path: scene, limits: loaded.config.sceneLimits)
                for warning in checked.warnings { standardError.write(Data("\(warning)\n".utf8)) }
            }
            print("ok")
        } catch let error as SceneValidationError {
            for diagnostic in error.diagnostics { standardError.write(Data("\(diagnostic)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}
