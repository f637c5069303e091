import Foundation
import KioskControl
import KioskCore
import KioskPlays

/// `plays`: the proof-of-play records, read off the loop on a connection of their own.
/// Arguments: `since` (seconds since the epoch, or an ISO 8601 time such as `2026-11-28T06:00:00Z`; default all),
/// `after` (a sequence number: only records after it; default 0), `limit` (1 to 10000, default 1000).
/// Result: `{"plays": [record, ...], "more": bool, "next_after": sequence}`, oldest first. A reply holds at most
/// `maximumPlaysReplyBytes` of records: `more` says whether records are left, and asking again with `after` set
/// to `next_after` gives the next ones. So a client that asks much and reads nothing holds the daemon to its
/// queue bound plus one such reply.
extension ControlWiring {
    static let maximumPlays = 10_000
    static let maximumPlaysReplyBytes = 1 << 20

    /// An upper bound of a record's size in a reply: its fixed fields and numbers, and its strings with each byte
    /// that JSON escapes counted at its longest (`\u0001`).
    static func replyBytesBound(_ record: PlayRecord) -> Int {
        func escaped(_ text: String) -> Int {
            text.utf8.reduce(2) { $0 + ($1 < 0x20 || $1 == 0x22 || $1 == 0x5C ? 6 : 1) }
        }
        return 400 + escaped(record.item) + escaped(record.scene) + escaped(record.output) + escaped(record.frameHash ?? "")
    }

    /// Registered with the other commands; answers `not_recording` until `playsPath` names a store.
    func registerPlayCommands() {
        let jobs = self.jobs, commands = server.commands
        commands.registerDeferred(.plays, arguments: ["since", "after", "limit"]) { [weak self] args, _, reply in
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
            var after: Int64 = 0
            if args.has("after") {
                let value = try args.number("after")
                guard value == value.rounded(), value >= 0, value < 9e15 else {
                    throw args.invalid("after", "expected a record's sequence number, a whole number from 0")
                }
                after = Int64(value)
            }
            var limit = 1000
            if args.has("limit") {
                let value = try args.number("limit")
                guard value == value.rounded(), (1...Double(Self.maximumPlays)).contains(value) else {
                    throw args.invalid("limit", "expected a whole number from 1 to \(Self.maximumPlays)")
                }
                limit = Int(value)
            }
            let from = since, count = limit, start = after
            jobs.run({ () -> Result<JSONValue, ControlError> in
                do {
                    let reader = try PlayStore(path: path, check: false)
                    // One more than asked, to tell whether records are left.
                    let records = try reader.records(since: from, after: start, limit: count + 1)
                    var shown: [JSONValue] = [], bytes = 0, last = start
                    for record in records.prefix(count) {
                        bytes += Self.replyBytesBound(record)
                        guard shown.isEmpty || bytes <= Self.maximumPlaysReplyBytes else { break }
                        shown.append(Self.playValue(record))
                        last = record.sequence
                    }
                    let more = records.count > shown.count
                    return .success(["plays": .array(shown), "more": .bool(more), "next_after": .int(last)])
                } catch {
                    return .failure(ControlError(code: "io_error", message: "plays: \(error)"))
                }
            }, then: reply.complete)
        }
    }

    static func isoDate(_ text: String) -> Date? {
        // Formatters are costly to make and not thread-safe (requests run on a background job): one per thread.
        if let date = threadFormatter(fractional: false).date(from: text) { return date }
        return threadFormatter(fractional: true).date(from: text)
    }

    /// This thread's ISO 8601 formatter, with or without fractional seconds.
    private static func threadFormatter(fractional: Bool) -> ISO8601DateFormatter {
        let key = fractional ? "kioskd.iso8601.fractional" : "kioskd.iso8601"
        if let formatter = Thread.current.threadDictionary[key] as? ISO8601DateFormatter { return formatter }
        let formatter = ISO8601DateFormatter()
        if fractional { formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds] }
        Thread.current.threadDictionary[key] = formatter
        return formatter
    }

    /// A record as `plays` and MQTT give it.
    static func playValue(_ record: PlayRecord) -> JSONValue {
        func time(_ ns: Int64?) -> JSONValue {
            guard let ns else { return .null }
            return .string(threadFormatter(fractional: true).string(from: Date(timeIntervalSince1970: Double(ns) / 1e9)))
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
