import Foundation
import KioskControl
import KioskCore
import KioskPlays

/// `plays`: the proof-of-play records, read off the loop on a connection of their own.
/// Arguments: `since` (seconds since the epoch, or an ISO 8601 time such as `2026-11-28T06:00:00Z`; default all),
/// `limit` (1 to 10000, default 1000). Result: `{"plays": [record, ...]}`, oldest first.
extension ControlWiring {
    static let maximumPlays = 10_000

    /// Registered with the other commands; answers `not_recording` until `playsPath` names a store.
    func registerPlayCommands() {
        let jobs = self.jobs, commands = server.commands
        commands.registerDeferred(.plays, arguments: ["since", "limit"]) { [weak self] args, _, reply in
            guard let path = self?.playsPath else {
                throw ControlError(code: "not_recording", message: "plays: proof of play is not recorded (no state directory: run under the unit, or give --plays-db)")
            }
            var since: Int64?
            if args.has("since") {
                if case .string(let text)? = args["since"] {
                    guard let date = Self.isoDate(text) else {
                        throw args.invalid("since", "'\(text)' is not a time; expected seconds since the epoch or ISO 8601 (2026-11-28T06:00:00Z)")
                    }
                    since = Int64((date.timeIntervalSince1970 * 1e9).rounded())
                } else {
                    let seconds = try args.number("since")
                    guard seconds.isFinite, abs(seconds) < 1e10 else { throw args.invalid("since", "\(seconds) is out of range") }
                    since = Int64(seconds * 1e9)
                }
            }
            var limit = 1000
            if args.has("limit") {
                let value = try args.number("limit")
                guard value == value.rounded(), (1...Double(Self.maximumPlays)).contains(value) else {
                    throw args.invalid("limit", "expected a whole number from 1 to \(Self.maximumPlays)")
                }
                limit = Int(value)
            }
            let from = since, count = limit
            jobs.run({ () -> Result<JSONValue, ControlError> in
                do {
                    let reader = try PlayStore(path: path, check: false)
                    let records = try reader.records(since: from, limit: count)
                    return .success(["plays": .array(records.map(Self.playValue))])
                } catch {
                    return .failure(ControlError(code: "io_error", message: "plays: \(error)"))
                }
            }, then: reply.complete)
        }
    }

    static func isoDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// A record as `plays` and MQTT give it.
    static func playValue(_ record: PlayRecord) -> JSONValue {
        func time(_ ns: Int64?) -> JSONValue {
            guard let ns else { return .null }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return .string(formatter.string(from: Date(timeIntervalSince1970: Double(ns) / 1e9)))
        }
        return [
            "sequence": .int(record.sequence),
            "kind": .string(record.kind.rawValue),
            "item": .string(record.item),
            "scene": .string(record.scene),
            "output": .string(record.output),
            "start": time(record.wallStart),
            "end": time(record.wallEnd),
            "monotonic_start_ns": .int(record.monotonicStart),
            "monotonic_end_ns": record.monotonicEnd.map { .int($0) } ?? .null,
            "duration_ms": record.durationMilliseconds.map { .int($0) } ?? .null,
            "ran_to_end": .bool(record.ranToEnd),
            "frame_hash": record.frameHash.map { .string($0) } ?? .null,
            "delivered": .bool(record.delivered),
        ]
    }
}
