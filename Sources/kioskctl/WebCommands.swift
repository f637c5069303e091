import ArgumentParser
import KioskControl

extension Kioskctl {
    /// `kioskctl web state|reload`: the web commands, for the scene's only web widget or the one named with `--id`.
    /// Each prints the widget's state afterwards.
    struct WebGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "web", abstract: "Show or reload a web widget's page.",
            subcommands: [State.self, Reload.self, Navigate.self, Eval.self, ClearData.self])

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
            static let configuration = CommandConfiguration(abstract: "Load the page again now.")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            func run() throws { try WebGroup.show("web.reload", target.arguments(), connection) }
        }

        struct Navigate: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show another address in the widget until the scene is loaded again (within its allowed_origins).")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            @Argument(help: "https://, http:// or file:///absolute/path.") var url: String
            func run() throws { try WebGroup.show("web.navigate", target.arguments(["url": .string(url)]), connection) }
        }

        struct Eval: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Run a script in the page and print its value (only with web: {allow_eval: true} in the config).")
            @OptionGroup var connection: ConnectionOptions
            @OptionGroup var target: Target
            @Argument(help: "The script (JavaScript).") var script: String
            func run() throws { try WebGroup.show("web.eval", target.arguments(["script": .string(script)]), connection) }
        }

        struct ClearData: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "clear-data", abstract: "Remove the cookies, storage and caches of every page.")
            @OptionGroup var connection: ConnectionOptions
            func run() throws { try WebGroup.show("web.clear_data", [:], connection) }
        }
    }
}
