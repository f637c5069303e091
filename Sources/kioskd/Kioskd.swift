// kioskd: the daemon executable: parses options and wires the modules together (run, check, devices, bench), nothing else.

import ArgumentParser
import Foundation
import KioskCore
import Logging

@main
struct Kioskd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskd",
        abstract: "Kiosk renderer for embedded Linux: draws straight to a DRM/KMS display.",
        version: KioskVersion.string,
        subcommands: [RunCommand.self, DevicesCommand.self, BenchCommand.self, CheckCommand.self, CheckConfigCommand.self,
                      ScheduleCommand.self],
        defaultSubcommand: RunCommand.self)
}

/// Options shared by subcommands that log.
struct LogOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info (default), notice, warning, error, critical.")
    var logLevel: Logger.Level?

    func bootstrap() {
        let level = logLevel ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Prints a runtime failure as one line naming the problem, and exits non-zero without a stack trace.
func fail(_ error: Error) -> ExitCode {
    FileHandle.standardError.write(Data("kioskd: \(error)\n".utf8))
    return ExitCode(1)
}
