import ArgumentParser
import KioskControl

extension Kioskctl {
    /// `kioskctl web state|reload`: the web commands, for the scene's only web widget or the one named with `--id`.
    /// Each prints the widget's state afterwards.
    struct WebGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "web", abstract: "Show or reload a web widget's page.",
            subcommands: [State.self, Reload.self])

        struct Target: ParsableArguments {
            @Option(help: "The web widget's id (default: the scene's only web widget).") var id: String?

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

        struct State: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the state: url, state, loads, failures, web process exits, refused navigations, frame counters, error.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            func run() throws { try WebGroup.show("web.state", target.arguments(), connection) }
        }

        struct Reload: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Load the page again now; with --url, another address until the scene is loaded again.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            @Option(help: "https://, http:// or file:///absolute/path.") var url: String?
            func run() throws {
                try WebGroup.show("web.reload", target.arguments(url.map { ["url": .string($0)] } ?? [:]), connection)
            }
        }
    }
}
