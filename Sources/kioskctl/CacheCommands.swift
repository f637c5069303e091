import ArgumentParser
import KioskControl
import KioskCore

extension Kioskctl {
    struct CacheGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cache", abstract: "Empty or revalidate the cache of assets named by URL.", subcommands: [Clear.self, Refresh.self])

        struct Clear: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove every cached asset the scenes on screen do not name; show the bytes and entries freed.")
            @OptionGroup var connection: ConnectionOptions

            func run() throws {
                let result = try connection.call(ControlCommandName.cacheClear.rawValue)
                if !connection.json {
                    print("freed \(result["bytes_freed"]?.intValue ?? 0) bytes in \(result["entries_freed"]?.intValue ?? 0) assets")
                }
            }
        }

        struct Refresh: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revalidate the assets the scenes name now (or only the one given), instead of at their next refresh.",
                discussion: "Example: kioskctl cache refresh --url https://cms.example.com/menu.png")
            @OptionGroup var connection: ConnectionOptions
            @Option(help: ArgumentHelp("Revalidate only this asset (a URL a scene names).", valueName: "url")) var url: String?

            func run() throws {
                let result = try connection.call(ControlCommandName.cacheRefresh.rawValue, url.map { ["url": .string($0)] } ?? [:])
                if !connection.json {
                    for item in result["refreshing"]?.arrayValue ?? [] { print("refreshing \(scalarText(item))") }
                }
            }
        }
    }
}
