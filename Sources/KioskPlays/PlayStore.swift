internal import CSQLite
import Foundation
import KioskCore

/// One record of proof of play: an item (a page, a video) on one output, from its start to its end, in wall-clock
/// and monotonic time, with the hash of the composed frame at its first flip. `sequence` numbers records without a
/// gap, in the order they started, for a collector to find what it missed. A plain value; any thread.
public struct PlayRecord: Sendable, Equatable {
    public enum Kind: String, Sendable { case page, video }
    public var sequence: Int64
    public var kind: Kind
    public var item: String
    public var scene: String
    public var output: String
    /// Nanoseconds since the epoch (CLOCK_REALTIME) and since boot (CLOCK_MONOTONIC).
    public var wallStart: Int64
    public var monotonicStart: Int64
    /// nil while the item is on screen, and for one that was on screen when kioskd stopped without a word (a
    /// crash, a power cut): its end is not known.
    public var wallEnd: Int64?
    public var monotonicEnd: Int64?
    /// Whether it stayed its whole time (a timed page its duration, a video to its end); false when cut short or
    /// not ended.
    public var ranToEnd: Bool
    /// `FrameHash` of the composed frame at its first flip once shown whole; nil until then.
    public var frameHash: String?
    /// Whether a collector acknowledged it (MQTT PUBACK).
    public var delivered: Bool

    /// Milliseconds on the glass (monotonic), once ended.
    public var durationMilliseconds: Int64? { monotonicEnd.map { ($0 - monotonicStart) / 1_000_000 } }
}

/// Why the store failed: the file and SQLite's message. An immutable value.
public struct PlayStoreError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ path: String, _ what: String, _ db: OpaquePointer?, code: Int32) {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        description = "proof of play store \(path): \(what): \(message) (SQLite \(code))"
    }
}

/// Proof of play on disk: SQLite in WAL mode, so a record committed survives a crash of kioskd at once and the file
/// is consistent after a power cut (SQLite's atomic commit), with a size cap past which the oldest records are
/// deleted. `synchronous=NORMAL`: a commit is a write to the WAL (the page cache), no fsync, so a record costs the
/// main thread a few syscalls and is on disk before the event that reports it goes out; the WAL is checkpointed
/// (and fsynced) by `checkpoint`, which the caller runs off the loop on a connection of its own. One connection per
/// thread; each instance lives on the thread that made it.
public final class PlayStore {
    public let path: String
    public let maximumBytes: Int64
    private var db: OpaquePointer?

    /// Opens (or makes) the store at `path`. `maximumBytes` caps the database file (not the WAL); at least 64 KiB.
    /// `check`: run SQLite's quick_check and refuse a store that fails it (the one that records does, at start).
    public init(path: String, maximumBytes: Int64 = 64 << 20, check: Bool = true) throws(PlayStoreError) {
        self.path = path
        self.maximumBytes = max(maximumBytes, 64 << 10)
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK else {
            let error = PlayStoreError(path, "open", handle, code: code)
            sqlite3_close(handle)
            throw error
        }
        db = handle
        sqlite3_busy_timeout(handle, 2000)
        do throws(PlayStoreError) {
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=NORMAL")
            try execute("PRAGMA wal_autocheckpoint=0")
            try execute("""
                CREATE TABLE IF NOT EXISTS plays(
                  sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                  kind TEXT NOT NULL, item TEXT NOT NULL, scene TEXT NOT NULL, output TEXT NOT NULL,
                  wall_start INTEGER NOT NULL, monotonic_start INTEGER NOT NULL,
                  wall_end INTEGER, monotonic_end INTEGER,
                  ran_to_end INTEGER NOT NULL DEFAULT 0, frame_hash TEXT, delivered INTEGER NOT NULL DEFAULT 0)
                """)
            try execute("CREATE INDEX IF NOT EXISTS plays_wall_start ON plays(wall_start)")
            if check {
                let answer = try rows("PRAGMA quick_check") { String(cString: sqlite3_column_text($0, 0)) }
                guard answer == ["ok"] else {
                    throw PlayStoreError(path, "not consistent: \(answer.prefix(3).joined(separator: "; "))", nil, code: SQLITE_CORRUPT)
                }
            }
        } catch {
            sqlite3_close(db)
            db = nil
            throw error
        }
    }

    deinit { sqlite3_close(db) }

    // MARK: Writing

    /// Records the start of an item; returns its sequence number.
    public func begin(kind: PlayRecord.Kind, item: String, scene: String, output: String, wallStart: Int64,
                      monotonicStart: Int64) throws(PlayStoreError) -> Int64 {
        try run("INSERT INTO plays(kind, item, scene, output, wall_start, monotonic_start) VALUES(?, ?, ?, ?, ?, ?)",
                [.text(kind.rawValue), .text(item), .text(scene), .text(output), .integer(wallStart), .integer(monotonicStart)])
        return sqlite3_last_insert_rowid(db)
    }

    /// Records the end of the item `sequence`.
    public func end(_ sequence: Int64, wallEnd: Int64, monotonicEnd: Int64, ranToEnd: Bool) throws(PlayStoreError) {
        try run("UPDATE plays SET wall_end = ?, monotonic_end = ?, ran_to_end = ? WHERE sequence = ?",
                [.integer(wallEnd), .integer(monotonicEnd), .integer(ranToEnd ? 1 : 0), .integer(sequence)])
    }

    /// Adds the frame hash; `output` renames the output (named by its connector once connected).
    public func setFrameHash(_ sequence: Int64, _ hash: String, output: String? = nil) throws(PlayStoreError) {
        if let output {
            try run("UPDATE plays SET frame_hash = ?, output = ? WHERE sequence = ?", [.text(hash), .text(output), .integer(sequence)])
        } else {
            try run("UPDATE plays SET frame_hash = ? WHERE sequence = ?", [.text(hash), .integer(sequence)])
        }
    }

    public func markDelivered(_ sequence: Int64) throws(PlayStoreError) {
        try run("UPDATE plays SET delivered = 1 WHERE sequence = ?", [.integer(sequence)])
    }

    /// Runs `body` as one transaction: all of its writes are on disk, or none (a page change ends one record and
    /// begins the next).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Reading

    /// Records that started at or after `wallSince` (nanoseconds since the epoch; nil for all), oldest first, at
    /// most `limit`.
    public func records(since wallSince: Int64? = nil, after sequence: Int64 = 0, limit: Int = 1000) throws(PlayStoreError) -> [PlayRecord] {
        try select("WHERE wall_start >= ? AND sequence > ? ORDER BY sequence LIMIT ?",
                   [.integer(wallSince ?? Int64.min), .integer(sequence), .integer(Int64(limit))])
    }

    /// Records not delivered yet, oldest first, after `sequence`, at most `limit`: what a collector still needs.
    public func undelivered(after sequence: Int64 = 0, limit: Int = 100) throws(PlayStoreError) -> [PlayRecord] {
        try select("WHERE delivered = 0 AND sequence > ? ORDER BY sequence LIMIT ?", [.integer(sequence), .integer(Int64(limit))])
    }

    /// Records to deliver: not delivered, after `sequence`, and ended, or begun before `openBefore` (a record left
    /// open by an earlier run of kioskd will never end). Oldest first, at most `limit`.
    public func deliverable(after sequence: Int64, openBefore: Int64, limit: Int) throws(PlayStoreError) -> [PlayRecord] {
        try select("WHERE delivered = 0 AND sequence > ? AND (wall_end IS NOT NULL OR sequence < ?) ORDER BY sequence LIMIT ?",
                   [.integer(sequence), .integer(openBefore), .integer(Int64(limit))])
    }

    /// The sequence number the next record will have.
    public func nextSequence() throws(PlayStoreError) -> Int64 {
        let last = try rows("SELECT seq FROM sqlite_sequence WHERE name = 'plays'") { sqlite3_column_int64($0, 0) }.first ?? 0
        return last + 1
    }

    /// SQLite's full `integrity_check` (every page, index and constraint): `["ok"]`, or what is wrong. Slower than the
    /// quick_check made at open; for audits and tests.
    public func integrityCheck() throws(PlayStoreError) -> [String] {
        try rows("PRAGMA integrity_check") { String(cString: sqlite3_column_text($0, 0)) }
    }

    public func count() throws(PlayStoreError) -> Int {
        try rows("SELECT count(*) FROM plays") { Int(sqlite3_column_int64($0, 0)) }.first ?? 0
    }

    // MARK: Upkeep

    /// Writes the WAL back into the database file (fsynced) and truncates it, then deletes the oldest records while
    /// the file is over the cap (the freed pages are reused; the file does not shrink). Returns the records
    /// deleted. Slow (fsync): off the loop.
    @discardableResult
    public func checkpointAndPrune() throws(PlayStoreError) -> Int {
        var deleted = 0
        let pageSize = try rows("PRAGMA page_size") { sqlite3_column_int64($0, 0) }.first ?? 4096
        while true {
            let used = try rows("SELECT (SELECT page_count FROM pragma_page_count()) - (SELECT freelist_count FROM pragma_freelist_count())") {
                sqlite3_column_int64($0, 0)
            }.first ?? 0
            guard used * pageSize > maximumBytes else { break }
            let total = try count()
            guard total > 0 else { break }
            // A tenth at a time, at least one.
            let batch = max(1, total / 10)
            try run("DELETE FROM plays WHERE sequence IN (SELECT sequence FROM plays ORDER BY sequence LIMIT ?)", [.integer(Int64(batch))])
            deleted += batch
        }
        try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return deleted
    }

    // MARK: SQLite

    enum Value { case integer(Int64), text(String) }

    private func execute(_ sql: String) throws(PlayStoreError) {
        _ = try rows(sql) { _ in () }
    }

    private func run(_ sql: String, _ values: [Value]) throws(PlayStoreError) {
        _ = try rows(sql, values) { _ in () }
    }

    private func select(_ clause: String, _ values: [Value]) throws(PlayStoreError) -> [PlayRecord] {
        let sql = """
            SELECT sequence, kind, item, scene, output, wall_start, monotonic_start, wall_end, monotonic_end, ran_to_end,
                   frame_hash, delivered FROM plays
            """ + " " + clause
        return try rows(sql, values) { s in
            func optional(_ column: Int32) -> Int64? { sqlite3_column_type(s, column) == SQLITE_NULL ? nil : sqlite3_column_int64(s, column) }
            func text(_ column: Int32) -> String { sqlite3_column_text(s, column).map { String(cString: $0) } ?? "" }
            return PlayRecord(sequence: sqlite3_column_int64(s, 0), kind: PlayRecord.Kind(rawValue: text(1)) ?? .page, item: text(2),
                              scene: text(3), output: text(4), wallStart: sqlite3_column_int64(s, 5), monotonicStart: sqlite3_column_int64(s, 6),
                              wallEnd: optional(7), monotonicEnd: optional(8), ranToEnd: sqlite3_column_int64(s, 9) != 0,
                              frameHash: sqlite3_column_type(s, 10) == SQLITE_NULL ? nil : text(10), delivered: sqlite3_column_int64(s, 11) != 0)
        }
    }

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func rows<T>(_ sql: String, _ values: [Value] = [], _ row: (OpaquePointer) -> T) throws(PlayStoreError) -> [T] {
        guard let db else { throw PlayStoreError(path, "closed", nil, code: SQLITE_MISUSE) }
        var statement: OpaquePointer?
        var code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw PlayStoreError(path, "prepare", db, code: code) }
        defer { sqlite3_finalize(statement) }
        for (index, value) in values.enumerated() {
            let column = Int32(index + 1)
            switch value {
            case .integer(let v): code = sqlite3_bind_int64(statement, column, v)
            case .text(let v): code = sqlite3_bind_text(statement, column, v, -1, Self.transient)
            }
            guard code == SQLITE_OK else { throw PlayStoreError(path, "bind", db, code: code) }
        }
        var result: [T] = []
        while true {
            code = sqlite3_step(statement)
            if code == SQLITE_ROW { result.append(row(statement)); continue }
            guard code == SQLITE_DONE else { throw PlayStoreError(path, "step", db, code: code) }
            return result
        }
    }
}
