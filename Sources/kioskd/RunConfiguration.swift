import ArgumentParser
import Foundation
import KioskApp
import KioskCore
import KioskRuntime
import KioskScene

/// `kioskd run` with its config file and board file: the three sources resolved into one `KioskConfiguration`.
extension RunCommand {
    /// The config file read: `--config FILE` (which must exist), else `/etc/kioskd/kioskd.yaml` when it exists.
    var configPath: String? {
        if let config { return config }
        return PathNames.exists(KioskConfig.defaultPath) ? KioskConfig.defaultPath : nil
    }

    /// These options over the config file over the board file, with the password files read
    /// (`ResolvedRun.read`).
    /// - Throws: `ExitCode(1)` after printing a file's problem on stderr, one line each; `ValidationError` for
    ///   settings that cannot work together.
    func resolvedRun() throws -> ResolvedRun {
        let run: ResolvedRun
        do {
            run = try ResolvedRun.read(commandLine: commandLine, configPath: configPath) { configuration in
                configuration.capturePages = capturePages
                configuration.clockSynchronizedFile = clockSynchronizedFile
                // systemd sets STATE_DIRECTORY to the unit's StateDirectory= folders, colon-separated: the first is kioskd's.
                let stateDirectory = ProcessInfo.processInfo.environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
                configuration.playsDatabase = playsDb ?? stateDirectory.map { $0 + "/plays.db" }
                configuration.stateDirectory = stateDirectory
                configuration.verifyCorruptComposed = verifyCorruptComposed
                configuration.webHangTimeout = webHangTimeout.map { .milliseconds(Int64(($0 * 1000).rounded())) }
                configuration.backlightDirectory = input.backlightDir
            }
        } catch let error as RunFileError {
            for line in error.lines { FileHandle.standardError.write(Data("kioskd: \(line)\n".utf8)) }
            throw ExitCode(1)
        } catch let error as KioskConfigurationError {
            throw ValidationError(error.description)
        }
        try InputOptions.validate(run.configuration.settings.idle)
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
        let report = try ConfigFileCheck.check(path: file)
        for line in report.warnings + report.problems { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
        guard report.passed else { throw ExitCode(1) }
        print("ok")
    }
}
