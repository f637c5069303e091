import ArgumentParser
import Foundation
import Glibc
import KioskControl
import KioskCore

extension Kioskctl {
    struct Power: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Blank or light the output (no flips while off; lighting it redraws the whole screen).")
        @OptionGroup var connection: ConnectionOptions

        enum State: String, ExpressibleByArgument, CaseIterable { case on, off }
        @Argument(help: "on or off.") var state: State
        @OptionGroup var display: OutputChoice

        func run() throws {
            let result = try connection.call(ControlCommandName.outputPower.rawValue, display.adding(to: ["on": .bool(state == .on)]))
            if !connection.json { print("display power: \(result["power"]?.stringValue ?? state.rawValue)") }
        }
    }

    struct Screenshot: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save the frame on screen (read back from the scanout buffer) as PNG.",
            discussion: """
            With -o the PNG is written by kioskctl; without it the PNG goes to standard output, which must not be
            a terminal. --server-path asks kioskd to write the file itself (an absolute path kioskd may write).
            In a sync group, --group-time-ns saves the frame presented at the vblank nearest that time on the
            group's clock (nanoseconds, as `stats` shows the group's time), waiting for it: at most 60 s ahead, and
            no more than one refresh period past.
            """)
        @OptionGroup var connection: ConnectionOptions
        @Option(name: .shortAndLong, help: "Write the PNG to this file.") var output: String?
        @Option(help: "Have kioskd write the PNG to this absolute path.") var serverPath: String?
        @Option(help: ArgumentHelp("Save the frame shown at the vblank nearest this time on the sync group's clock.", valueName: "ns"))
        var groupTimeNs: Int64?
        @OptionGroup var display: OutputChoice

        func validate() throws {
            if output != nil && serverPath != nil { throw ValidationError("give -o or --server-path, not both") }
            if let serverPath, !serverPath.hasPrefix("/") { throw ValidationError("--server-path \(serverPath): must be an absolute path") }
            if output == nil, serverPath == nil, !connection.json, isatty(STDOUT_FILENO) == 1 {
                throw ValidationError("standard output is a terminal: give -o FILE or redirect it to a file")
            }
        }

        func run() throws {
            if let serverPath {
                let result = try connection.call("screenshot", display.adding(to: arguments(["path": .string(serverPath)])))
                if !connection.json { print("\(serverPath): \(dimensions(result))") }
                return
            }
            let result = try connection.call("screenshot", display.adding(to: arguments([:])))
            if connection.json { return }
            guard let text = result["png_base64"]?.stringValue, let png = Data(base64Encoded: text) else {
                throw ClientFailure(message: "screenshot: the reply carries no png_base64", status: ClientFailure.errorReplyStatus)
            }
            if let output {
                do { try png.write(to: URL(fileURLWithPath: output)) } catch {
                    throw ClientFailure(message: "\(output): cannot write: \(error.localizedDescription)", status: ClientFailure.errorReplyStatus)
                }
                print("\(output): \(dimensions(result))")
            } else {
                FileHandle.standardOutput.write(png)
            }
        }

        private func arguments(_ given: [String: JSONValue]) -> [String: JSONValue] {
            var all = given
            if let groupTimeNs { all["group_time_ns"] = .int(groupTimeNs) }
            return all
        }

        private func dimensions(_ result: JSONValue) -> String {
            let shown = result["vblank_group_time_ns"]?.intValue.map { ", shown at group time \($0) ns" } ?? ""
            return "\(result["width"]?.intValue ?? 0)x\(result["height"]?.intValue ?? 0) PNG" + shown
        }
    }

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read one frame back through the output's writeback connector and compare it with the composed frame.",
            discussion: """
            Prints matched or mismatch with the pixels that differ; exits 1 on a mismatch (kioskd then reports the
            health reason scanout_mismatch and saves both images under its state directory). Outputs without a
            writeback connector answer unavailable, with the reason.
            """)
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var display: OutputChoice

        func run() throws {
            let result = try connection.call(ControlCommandName.outputVerify.rawValue, display.adding(to: [:]))
            let verdict = result["result"]?.stringValue ?? "?"
            let line = "\(verdict): frame \(result["frame"]?.intValue ?? 0), \(result["pixels_differing"]?.intValue ?? 0) of "
                + "\(result["width"]?.intValue ?? 0)x\(result["height"]?.intValue ?? 0) pixels differ, "
                + "max channel difference \(result["max_channel_difference"]?.intValue ?? 0)"
            if !connection.json { print(line) }
            guard verdict == "matched" else {
                let images = ["composed", "scanout"].compactMap { result["images"]?[$0]?.stringValue }
                throw ClientFailure(message: "scanout mismatch" + (images.isEmpty ? "" : "; images: \(images.joined(separator: ", "))"),
                                    status: ClientFailure.errorReplyStatus)
            }
        }
    }

    struct LogLevel: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "log-level", abstract: "Show kioskd's log level, or set it.")
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "trace, debug, info, notice, warning, error or critical.") var level: String?

        func run() throws {
            let result = try connection.call("log.level", level.map { ["level": .string($0)] } ?? [:])
            if !connection.json { print(result["level"]?.stringValue ?? "") }
        }
    }
}
