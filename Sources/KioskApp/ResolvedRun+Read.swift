import Foundation
import KioskScene

/// A file a run needs that cannot be used, without keep-going: the run ends before it starts. A plain value.
public struct RunFileError: Error, CustomStringConvertible {
    /// What to print, one line each: a config file's located errors, or the one error of another file.
    public let lines: [String]
    /// Whether the lines are the config file's own diagnostics (printed as they are, after `kioskd: `).
    public let isConfigFile: Bool

    public var description: String { lines.joined(separator: "\n") }
}

extension ResolvedRun {
    /// The command line's settings (`commandLine`) over the config file at `configPath` over the board file it or the
    /// command line names (`KioskConfiguration.resolve`), with the MQTT and VNC password files read: everything a run
    /// reads before its loop starts. A file that cannot be used fails the run, or, where keep-going was asked for,
    /// becomes the run's `problem`: the run then goes on without what that file gave, and shows the diagnostic page.
    /// Keep-going for the config file itself can only come from the command line (`commandLine.keepGoing`); for the
    /// board and password files the config file's `keep_going` counts too. Without keep-going given anywhere, a run
    /// keeps going unless the command line named the scene: a scene given at a terminal should fail loudly, while a
    /// kiosk never goes black. `commandLineOnly` sets what only the command line gives (`--capture-pages`, the plays
    /// store…) before the settings are validated.
    /// - Throws: `RunFileError` for a file that cannot be used without keep-going; `KioskConfigurationError` for
    ///   settings that cannot work together.
    public static func read(commandLine: KioskConfig, configPath: String?,
                            commandLineOnly: (inout KioskConfiguration) -> Void = { _ in }) throws -> ResolvedRun {
        var run = ResolvedRun()
        var configFile = KioskConfig()
        if let path = configPath {
            do {
                let loaded = try ConfigLoader.load(path: path)
                configFile = loaded.config
                run.warnings = loaded.warnings
                run.fleet = loaded.config.mqtt.map { FleetWiring.Configuration(settings: $0, file: path, sync: loaded.config.sync) }
            } catch {
                guard commandLine.keepGoing == true else {
                    throw RunFileError(lines: error.diagnostics.map { "\($0)" }, isConfigFile: true)
                }
                run.problem = ConfigurationProblem(subject: .configFile(path), error: error)
            }
        }
        let keepGoingAsked = (commandLine.keepGoing ?? configFile.keepGoing) == true
        func fail(_ error: any Error) -> RunFileError { RunFileError(lines: ["\(error)"], isConfigFile: false) }
        var boardFile = BoardConfig()
        if run.problem == nil, let path = commandLine.board ?? configFile.board {
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
                guard keepGoingAsked else { throw RunFileError(lines: error.diagnostics.map(\.description), isConfigFile: false) }
                let file = error.diagnostics.first?.path == "vnc.tls.key" ? tls.keyFile : tls.certificateFile
                run.problem = ConfigurationProblem(subject: .vncTLSFile(file), error: error)
            }
        }
        var configuration = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: boardFile)
        commandLineOnly(&configuration)
        if configuration.settings.keepGoing == nil { configuration.settings.keepGoing = commandLine.scene == nil }
        try configuration.validate()
        run.configuration = configuration
        return run
    }
}
