import ArgumentParser
import KioskControl

extension Kioskctl {
    /// `kioskctl video play|pause|seek|state|load`: the video commands, for the scene's only video widget or the one
    /// named with `--id`. Each prints the widget's state afterwards.
    struct VideoGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "video", abstract: "Play, pause, seek, load or show a video widget.",
            subcommands: [Play.self, Pause.self, Seek.self, State.self, Load.self])

        struct Target: ParsableArguments {
            @Option(help: "The video widget's id (default: the scene's only video widget).") var id: String?

            func arguments(_ more: [String: JSONValue] = [:]) -> [String: JSONValue] {
                var arguments = more
                if let id { arguments["id"] = .string(id) }
                return arguments
            }
        }

        static func show(_ command: String, _ arguments: [String: JSONValue], _ connection: ConnectionOptions) throws {
            let result = try connection.call(command, arguments)
            if !connection.json { printHuman(result) }
        }

        struct Play: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Play (or resume) the video.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            func run() throws { try VideoGroup.show("video.play", target.arguments(), connection) }
        }

        struct Pause: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Pause the video; it decodes nothing while paused.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            func run() throws { try VideoGroup.show("video.pause", target.arguments(), connection) }
        }

        struct Seek: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Jump to a position; a paused video shows the frame there.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            @Argument(help: "Seconds from the start.") var position: Double
            func validate() throws {
                guard position.isFinite, position >= 0 else { throw ValidationError("position \(position): seconds from the start, 0 or more") }
            }
            func run() throws { try VideoGroup.show("video.seek", target.arguments(["position": .double(position)]), connection) }
        }

        struct State: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the state: source, playlist index, state, position, duration, frame counters, error, and why no playlist item plays (waiting).")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            func run() throws { try VideoGroup.show("video.state", target.arguments(), connection) }
        }

        struct Load: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Replace the playlist with one clip and play it.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            @Argument(help: "An absolute file path or a URI.") var source: String
            func run() throws { try VideoGroup.show("video.load", target.arguments(["source": .string(source)]), connection) }
        }
    }
}
