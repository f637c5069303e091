// kioskctl: the control-socket client: one subcommand per command, human-readable or raw JSON output.

import ArgumentParser
import Foundation
import Glibc
import KioskControl
import KioskCore

/// `--connector NAME`: the output a command acts on when kioskd drives several (an `outputs:` section); without it
/// the first. Sent as the request's `output`.
struct OutputChoice: ParsableArguments {
    @Option(help: ArgumentHelp("The output to act on (its connector, as output-info lists it) when kioskd drives several; default: the first.",
                               valueName: "name"))
    var connector: String?

    /// `arguments` with `output` added when a connector was given.
    func adding(to arguments: [String: JSONValue]) -> [String: JSONValue] {
        guard let connector else { return arguments }
        return arguments.merging(["output": .string(connector)]) { $1 }
    }
}

struct ConnectionOptions: ParsableArguments {
    @Option(help: "Control socket of kioskd (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock).")
    var socket: String?

    @Flag(help: "Print the raw JSON reply instead of human-readable output.")
    var json = false

    var socketPath: String {
        socket ?? ProcessInfo.processInfo.environment["KIOSKD_SOCKET"] ?? ControlServerOptions.defaultSocketPath
    }

    /// Sends one request and returns the reply's `result`; prints the raw reply with `--json`. An error reply
    /// is printed to stderr and ends the command with status 1.
    func call(_ command: String, _ arguments: [String: JSONValue] = [:]) throws -> JSONValue {
        let client = try ControlClient(path: socketPath)
        try client.sendLine(ControlRequest(id: 1, command: command, arguments: arguments).jsonLine())
        let (line, reply) = try client.readReply()
        return try handle(line: line, reply: reply, printRaw: json)
    }
}

/// Prints the raw reply when asked; turns an error reply into status 1.
func handle(line: [UInt8], reply: JSONValue, printRaw: Bool) throws -> JSONValue {
    if printRaw { print(String(decoding: line, as: UTF8.self)) }
    guard reply["ok"]?.boolValue == true else {
        let code = reply["error"]?["code"]?.stringValue ?? "invalid_reply"
        let message = reply["error"]?["message"]?.stringValue ?? String(decoding: line, as: UTF8.self)
        if !printRaw { FileHandle.standardError.write(Data("kioskctl: \(code): \(message)\n".utf8)) }
        throw ExitCode(ClientFailure.errorReplyStatus)
    }
    return reply["result"] ?? .null
}

/// Human-readable `key: value` lines, nested objects indented, keys sorted.
func printHuman(_ value: JSONValue, indent: String = "") {
    switch value {
    case .object(let members):
        for key in members.keys.sorted() {
            let member = members[key]!
            if case .object = member {
                print("\(indent)\(key):")
                printHuman(member, indent: indent + "  ")
            } else if case .array(let elements) = member, elements.contains(where: { $0.objectValue != nil }) {
                print("\(indent)\(key):")
                printHuman(member, indent: indent + "  ")
            } else {
                print("\(indent)\(key): \(scalarText(member))")
            }
        }
    case .array(let elements) where elements.contains(where: { $0.objectValue != nil }):
        for element in elements {
            if case .object(let members) = element {
                print(indent + "- " + members.keys.sorted().map { "\($0): \(scalarText(members[$0]!))" }.joined(separator: ", "))
            } else {
                print(indent + "- " + scalarText(element))
            }
        }
    default:
        print(indent + scalarText(value))
    }
}

func scalarText(_ value: JSONValue) -> String {
    switch value {
    case .null: return "null"
    case .bool(let b): return b ? "yes" : "no"
    case .int(let i): return String(i)
    case .double(let d): return String(format: "%.3f", d)
    case .string(let s): return s
    case .array(let a): return a.map(scalarText).joined(separator: ", ")
    case .object: return (try? String(decoding: value.jsonLine(), as: UTF8.self)) ?? ""
    }
}

struct Kioskctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kioskctl",
        abstract: "Drive a running kioskd over its control socket (JSON Lines on a Unix socket).",
        discussion: """
        Exit status:
          0  the command succeeded
          1  kioskd answered with an error reply (code and message on stderr), or verify found a mismatch
          2  usage error (unknown subcommand, bad option or argument)
          3  cannot connect to the control socket, or the connection was lost
        """,
        version: KioskVersion.string,
        subcommands: [Ping.self, Version.self, Stats.self, OutputInfo.self, Power.self, Screenshot.self, Verify.self,
                      SceneGroup.self, WidgetGroup.self, DataGroup.self, PageGroup.self, Animate.self,
                      VideoGroup.self, WebGroup.self, LogLevel.self, Plays.self, CacheGroup.self, Raw.self, Watch.self])

    struct Ping: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check that kioskd answers.")
        @OptionGroup var connection: ConnectionOptions
        func run() throws {
            _ = try connection.call("ping")
            if !connection.json { print("pong") }
        }
    }

    struct Version: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show kioskd's version.")
        @OptionGroup var connection: ConnectionOptions
        func run() throws {
            let result = try connection.call("version")
            if !connection.json { printHuman(result) }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show frame counters: flips, missed vblanks, engine statistics.")
        @OptionGroup var connection: ConnectionOptions
        func run() throws {
            let result = try connection.call("stats")
            if !connection.json { printHuman(result) }
        }
    }

    /// `output-info`; `display-info`, its older name, still works.
    struct OutputInfo: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "output-info",
            abstract: "Show the output: device, driver, connector, current and available modes, commit API, rotation, power, and every connector, connected or not.",
            aliases: ["display-info"])
        @OptionGroup var connection: ConnectionOptions
        @OptionGroup var output: OutputChoice
        func run() throws {
            let result = try connection.call(ControlCommandName.outputInfo.rawValue, output.adding(to: [:]))
            if !connection.json { printHuman(result) }
        }
    }

    struct Raw: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send one request line as given and print the reply as received.",
            discussion: #"Example: kioskctl raw '{"id": 7, "cmd": "ping"}'"#)
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "The request, one JSON object.") var request: String

        func validate() throws {
            guard !request.contains("\n") else { throw ValidationError("the request must be one line") }
        }

        func run() throws {
            let client = try ControlClient(path: connection.socketPath)
            try client.sendLine(Data(request.utf8))
            let (line, reply) = try client.readReply()
            _ = try handle(line: line, reply: reply, printRaw: true)
        }
    }

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Subscribe to events and print each as one JSON line until interrupted.",
            discussion: """
            Events:
              frame  a composed frame was presented: frame, damage_rects, timestamp_ns
              flip   a page flip completed: sequence, timestamp_ns, fingerprint (of the frame now on screen)
              scene  a scene was loaded (kind loaded: source, pages) or a page shown (kind page_shown: page)
              data   data keys changed: values
              error  something failed with no request to answer: code, message (screen_black, screen_frozen: what is on screen)
              input  a touch, click or key on the scene: kind (down, up, press, cancel, key), id, action, x, y, output, key, time_us
              power  the screen's idle state changed: state (active, dimmed, blanked), previous, reason
              display  the display changed: state (connected, disconnected, mode), connector, mode
              video  a video widget started, ended, looped or failed: id, kind, source, message (for error)
            """)
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Event names: frame, flip, scene, data, error, input, power, display, video.") var events: [String]

        static let eventNames: Set<String> = ["frame", "flip", "scene", "data", "error", "input", "power", "display", "video", "web", "cache"]

        func validate() throws {
            guard !events.isEmpty else { throw ValidationError("name at least one event") }
            let unknown = events.filter { !Self.eventNames.contains($0) }
            guard unknown.isEmpty else {
                throw ValidationError("unknown event \(unknown.joined(separator: ", ")); events: \(Self.eventNames.sorted().joined(separator: ", "))")
            }
        }

        func run() throws {
            let client = try ControlClient(path: connection.socketPath)
            try client.sendLine(ControlRequest(id: "watch", command: "subscribe",
                                               arguments: ["events": .array(events.map(JSONValue.string))]).jsonLine())
            let printEvent: ([UInt8], JSONValue) -> Void = { line, _ in printFlushed(line) }
            let (line, reply) = try client.readReply(onEvent: printEvent)
            _ = try handle(line: line, reply: reply, printRaw: connection.json)
            while let line = try client.readLine() {
                printFlushed(line)
            }
            throw ClientFailure(message: "control socket \(connection.socketPath): kioskd closed the connection", status: ClientFailure.cannotConnectStatus)
        }
    }
}

/// Prints one event line and flushes, so each is visible at once through a pipe.
func printFlushed(_ line: [UInt8]) {
    print(String(decoding: line, as: UTF8.self))
    fflush(nil)
}

/// Runs the command with kioskctl's own exit statuses: ArgumentParser's usage status (64) becomes 2.
@main
enum KioskctlMain {
    static func main() {
        let command: ParsableCommand
        do {
            command = try Kioskctl.parseAsRoot()
        } catch {
            if Kioskctl.exitCode(for: error) == .success { Kioskctl.exit(withError: error) }
            FileHandle.standardError.write(Data((Kioskctl.fullMessage(for: error) + "\n").utf8))
            exit(ClientFailure.usageStatus)
        }
        do {
            var command = command
            try command.run()
        } catch let failure as ClientFailure {
            FileHandle.standardError.write(Data("kioskctl: \(failure.message)\n".utf8))
            exit(failure.status)
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            // The root command's own run() asks for help by throwing; that is a clean exit.
            if Kioskctl.exitCode(for: error) == .success { Kioskctl.exit(withError: error) }
            if error is ValidationError || Kioskctl.exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((Kioskctl.fullMessage(for: error) + "\n").utf8))
                exit(ClientFailure.usageStatus)
            }
            FileHandle.standardError.write(Data("kioskctl: \(error)\n".utf8))
            exit(ClientFailure.errorReplyStatus)
        }
    }
}
