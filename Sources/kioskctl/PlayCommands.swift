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
        @Option(help: "Only records after this sequence number.")
        var after: Int64?
        @Option(help: "At most this many records, oldest first (1 to 10000; default 1000). kioskd answers in replies of at most 1 MiB; kioskctl asks again until it has them all (with --json, one reply a line).")
        var limit: Int?

        func run() throws {
            var arguments: [String: JSONValue] = [:]
            if let since { arguments["since"] = Double(since).map { .double($0) } ?? .string(since) }
            if let after { arguments["after"] = .int(after) }
            var left = limit ?? 1000
            arguments["limit"] = .int(Int64(left))
            while true {
                let result = try connection.call("plays", arguments)
                let records = result["plays"]?.arrayValue ?? []
                if !connection.json { show(records) }
                left -= records.count
                guard result["more"]?.boolValue == true, left > 0, !records.isEmpty, let next = result["next_after"]?.intValue else { return }
                arguments["after"] = .int(next)
                arguments["limit"] = .int(Int64(left))
            }
        }

        private func show(_ records: [JSONValue]) {
            for record in records {
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
