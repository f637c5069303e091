import ArgumentParser
import Foundation
import KioskControl

extension Kioskctl {
    struct Plays: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show proof of play: what each output showed, when and for how long, with the hash of the frame shown.")
        @OptionGroup var connection: ConnectionOptions
        @Option(help: "Only records that started at or after this time: seconds since the epoch, or ISO 8601 (2026-11-28T06:00:00Z).")
        var since: String?
        @Option(help: "At most this many records, oldest first (1 to 10000; default 1000).")
        var limit: Int?

        func run() throws {
            var arguments: [String: JSONValue] = [:]
            if let since { arguments["since"] = Double(since).map { .double($0) } ?? .string(since) }
            if let limit { arguments["limit"] = .int(Int64(limit)) }
            let result = try connection.call("plays", arguments)
            guard !connection.json else { return }
            for record in result["plays"]?.arrayValue ?? [] {
                let duration = record["duration_ms"].flatMap { value -> String? in
                    if case .int(let ms) = value { return String(format: "%.1f s", Double(ms) / 1000) }
                    return nil
                } ?? "on screen"
                let fields = [record["sequence"].map(scalarText) ?? "", record["start"]?.stringValue ?? "", duration,
                              record["output"]?.stringValue ?? "", record["kind"]?.stringValue ?? "", record["item"]?.stringValue ?? "",
                              record["ran_to_end"] == .bool(true) ? "ran to end" : "cut short", record["frame_hash"]?.stringValue ?? "-"]
                print(fields.joined(separator: "  "))
            }
        }
    }
}
