import ArgumentParser
import Foundation
import KioskControl

/// `key=value` arguments: the value parsed as JSON when it is JSON (`12`, `true`, `"x"`, `[1, 2]`), else taken
/// as a string, so `text=Hello` needs no quoting.
func keyValuePairs(_ arguments: [String], parseJSON: Bool) throws -> [String: JSONValue] {
    var pairs: [String: JSONValue] = [:]
    for argument in arguments {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
            throw ValidationError("'\(argument)': expected key=value")
        }
        let key = String(argument[..<equals]), text = String(argument[argument.index(after: equals)...])
        if parseJSON, let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) {
            pairs[key] = value
        } else {
            pairs[key] = .string(text)
        }
    }
    return pairs
}

/// A path as kioskd must see it: absolute, resolved against kioskctl's working directory.
func absolutePath(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

extension Kioskctl {
    struct SceneGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scene", abstract: "Load a scene or show the one on screen.", subcommands: [Load.self, Get.self])

        struct Load: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Replace the scene with a file or inline YAML; returns once it is on screen. An invalid one is refused and the current stays.")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "Scene file (YAML or JSON), or an https:// or http:// URL of one (fetched into kioskd's asset cache and revalidated).") var file: String?
            @Option(help: "The scene as inline YAML instead of a file.") var yaml: String?
            @OptionGroup var output: OutputChoice

            func validate() throws {
                guard (file == nil) != (yaml == nil) else { throw ValidationError("give a scene FILE or --yaml TEXT (one of them)") }
            }

            func run() throws {
                let arguments: [String: JSONValue] = if let file, let colon = file.firstIndex(of: ":"),
                                                           ["https", "http"].contains(file[..<colon].lowercased()) {
                    ["url": .string(file)]
                } else if let file {
                    ["path": .string(absolutePath(file))]
                } else {
                    ["yaml": .string(yaml ?? ""), "base_directory": .string(FileManager.default.currentDirectoryPath)]
                }
                // Subscribed first, so the `loaded` event that follows the reply cannot be missed: the command
                // returns once the new scene is on screen.
                let client = try ControlClient(path: connection.socketPath)
                try client.sendLine(ControlRequest(id: "events", command: "subscribe", arguments: ["events": ["scene", "error"]]).jsonLine())
                let (subscribedLine, subscribed) = try client.readReply()
                _ = try handle(line: subscribedLine, reply: subscribed, printRaw: false)
                try client.sendLine(ControlRequest(id: 1, command: "scene.load", arguments: output.adding(to: arguments)).jsonLine())
                let (line, reply) = try client.readReply()
                let result = try handle(line: line, reply: reply, printRaw: connection.json)
                let source = result["source"]?.stringValue ?? ""
                while let eventLine = try client.readLine() {
                    let event = (try? JSONDecoder().decode(JSONValue.self, from: Data(eventLine))) ?? .null
                    if event["event"] == "error" {
                        FileHandle.standardError.write(Data("kioskctl: \(event["data"]?["code"]?.stringValue ?? "error"): \(event["data"]?["message"]?.stringValue ?? "")\n".utf8))
                        throw ExitCode(ClientFailure.errorReplyStatus)
                    }
                    guard event["event"] == "scene", event["data"]?["kind"] == "loaded", event["data"]?["source"]?.stringValue == source else { continue }
                    if connection.json { printFlushed(eventLine) } else { print("loaded \(source): pages \(scalarText(event["data"]?["pages"] ?? []))") }
                    return
                }
                throw ClientFailure(message: "control socket \(connection.socketPath): kioskd closed the connection before the scene was shown",
                                    status: ClientFailure.cannotConnectStatus)
            }
        }

        struct Get: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show the scene: source, size, pages, current page, data keys, widgets.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var output: OutputChoice
            func run() throws {
                let result = try connection.call("scene.get", output.adding(to: [:]))
                if !connection.json { printHuman(result) }
            }
        }
    }

    struct WidgetGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "widget", abstract: "Show or change a widget's properties.", subcommands: [Get.self, Set.self])

        struct Get: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show a widget's properties, type, page and frame.")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "Widget id.") var id: String
            func run() throws {
                let result = try connection.call("widget.get", ["id": .string(id)])
                if !connection.json { printHuman(result) }
            }
        }

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Change widget properties, named as in the scene file.",
                discussion: ##"Values are JSON when they parse as JSON, else strings: kioskctl widget set title text=Hello opacity=0.5 foreground='"#ff0000"'"##)
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "Widget id.") var id: String
            @Argument(help: "Properties as key=value.") var properties: [String]

            func validate() throws {
                guard !properties.isEmpty else { throw ValidationError("give at least one key=value") }
                _ = try keyValuePairs(properties, parseJSON: true)
            }

            func run() throws {
                let props = try keyValuePairs(properties, parseJSON: true)
                let result = try connection.call("widget.set", ["id": .string(id), "props": .object(props)])
                if !connection.json { printHuman(result) }
            }
        }
    }

    struct DataGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "data", abstract: "Set or show the scene's data keys.", subcommands: [Set.self, Get.self])

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set data keys; all of them change in one frame.",
                discussion: "Example: kioskctl data set temperature=21.5 humidity=48")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "Values as key=value.") var values: [String]

            func validate() throws {
                guard !values.isEmpty else { throw ValidationError("give at least one key=value") }
                _ = try keyValuePairs(values, parseJSON: false)
            }

            func run() throws {
                let result = try connection.call("data.set", ["values": .object(try keyValuePairs(values, parseJSON: false))])
                if !connection.json { print("set \(result["set"]?.intValue ?? 0) keys") }
            }
        }

        struct Get: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show data keys and their values (all when none are named).")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "Keys to show.") var keys: [String] = []

            func run() throws {
                let arguments: [String: JSONValue] = keys.isEmpty ? [:] : ["keys": .array(keys.map(JSONValue.string))]
                let result = try connection.call("data.get", arguments)
                if !connection.json { printHuman(result["values"] ?? [:]) }
            }
        }
    }

    struct PageGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "page", abstract: "Switch pages.", subcommands: [Show.self])

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show a page, with its own transition or the one given.",
                discussion: "Example: kioskctl page show weather --transition fade --duration 0.4 --easing ease-in-out")
            @OptionGroup var connection: ConnectionOptions
            @Argument(help: "Page name.") var name: String
            @Option(help: "cut, fade, slide-left or slide-right (default: the page's own).") var transition: String?
            @Option(help: "Transition seconds (default 0.5).") var duration: Double?
            @Option(help: "linear, ease-in, ease-out, ease-in-out or cubic-bezier(x1, y1, x2, y2) (default ease-in-out).")
            var easing: String?
            @OptionGroup var output: OutputChoice

            func validate() throws {
                if transition == nil && (duration != nil || easing != nil) {
                    throw ValidationError("--duration and --easing need --transition")
                }
            }

            func run() throws {
                var arguments: [String: JSONValue] = ["name": .string(name)]
                if let transition {
                    var object: [String: JSONValue] = ["kind": .string(transition)]
                    if let duration { object["duration"] = .double(duration) }
                    if let easing { object["easing"] = .string(easing) }
                    arguments["transition"] = .object(object)
                }
                let result = try connection.call("page.show", output.adding(to: arguments))
                if !connection.json { print("page: \(result["page"]?.stringValue ?? name)") }
            }
        }
    }

    struct Animate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Animate a widget property: basic (duration, easing), spring or decay.",
            discussion: """
            Properties: opacity, x, y, position (2 values), scale, rotation (degrees), foreground and background
            (4 values, RGBA 0...1), value (progress).
            Examples:
              kioskctl animate logo opacity 0 --duration 0.5 --easing ease-out
              kioskctl animate card position 100 -40 --spring --stiffness 200 --damping 12 --velocity 0,300
              kioskctl animate ticker x --decay --velocity -800
            """)
        @OptionGroup var connection: ConnectionOptions
        @Argument(help: "Widget id.") var id: String
        @Argument(help: "Property name.") var property: String
        // Every input no option claims, so negative targets (`-20`) need no `--`.
        @Argument(parsing: .allUnrecognized, help: "Target value(s); none for --decay.") var targets: [String] = []

        @Flag(help: "A spring animation.") var spring = false
        @Flag(help: "A decay animation (starts at --velocity and slows down; the target is ignored).") var decay = false
        @Option(help: "Basic: seconds (default 0.3).") var duration: Double?
        @Option(help: "Basic: linear, ease-in, ease-out, ease-in-out or cubic-bezier(x1, y1, x2, y2).") var easing: String?
        @Option(help: "Spring stiffness (default 100).") var stiffness: Double?
        @Option(help: "Spring damping (default 10).") var damping: Double?
        @Option(help: "Spring mass (default 1).") var mass: Double?
        @Option(parsing: .unconditional, help: "Spring or decay: initial velocity in units per second, one number or comma-separated numbers per value (-800, 120,-40).")
        var velocity: String?
        @Option(help: "Decay: deceleration per millisecond (default 0.998).") var deceleration: Double?
        @Option(help: "Start at this time, in milliseconds since 1970-01-01 UTC: the group clock's in a sync group (every member starts at the same vblank), the kiosk's wall clock otherwise.")
        var at: Double?

        private var values: [Double] { targets.compactMap(Double.init) }
        private var velocities: [Double] { velocity.map { $0.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) } } ?? [] }

        func validate() throws {
            if let bad = targets.first(where: { Double($0) == nil }) { throw ValidationError("'\(bad)' is not a number (target values) nor an option") }
            if let velocity, velocities.count != velocity.split(separator: ",").count || velocities.isEmpty {
                throw ValidationError("--velocity \(velocity): expected numbers separated by commas")
            }
            if spring && decay { throw ValidationError("--spring and --decay exclude each other") }
            if (spring || decay) && (duration != nil || easing != nil) { throw ValidationError("--duration and --easing are for basic animations") }
            if !spring && (stiffness != nil || damping != nil || mass != nil) { throw ValidationError("--stiffness, --damping and --mass need --spring") }
            if !decay && deceleration != nil { throw ValidationError("--deceleration needs --decay") }
            if !spring && !decay && velocity != nil { throw ValidationError("--velocity needs --spring or --decay") }
            if decay && velocity == nil { throw ValidationError("--decay needs --velocity") }
            if !decay && values.isEmpty { throw ValidationError("give the target value(s)") }
        }

        func run() throws {
            var arguments: [String: JSONValue] = ["id": .string(id), "property": .string(property)]
            if !values.isEmpty { arguments["to"] = values.count == 1 ? .double(values[0]) : .array(values.map(JSONValue.double)) }
            let numbers: (Double?) -> JSONValue? = { $0.map(JSONValue.double) }
            if spring {
                arguments["kind"] = "spring"
                arguments["stiffness"] = numbers(stiffness)
                arguments["damping"] = numbers(damping)
                arguments["mass"] = numbers(mass)
            } else if decay {
                arguments["kind"] = "decay"
                arguments["deceleration"] = numbers(deceleration)
            } else {
                arguments["kind"] = "basic"
                arguments["duration"] = numbers(duration)
                arguments["easing"] = easing.map(JSONValue.string)
            }
            if !velocities.isEmpty { arguments["velocity"] = velocities.count == 1 ? .double(velocities[0]) : .array(velocities.map(JSONValue.double)) }
            if let at { arguments["at"] = .double(at) }
            _ = try connection.call("animate", arguments)
            if !connection.json { print("animating \(id).\(property)") }
        }
    }
}
