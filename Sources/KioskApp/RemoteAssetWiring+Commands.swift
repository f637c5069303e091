import Foundation
import KioskControl
import KioskCore
import KioskFetch
import KioskScene

/// The asset cache's figures (`stats` and `<prefix>/state` under `cache`), its `cache` event, and the
/// `cache.clear` and `cache.refresh` commands. Main thread.
extension RemoteAssetWiring {
    /// The longest URL `cache.refresh` takes: longer ones are no asset of a scene.
    static let maximumURLBytes = 8192

    func registerCacheCommands() {
        guard let control else { return }
        control.cacheStats = { [weak self] in self?.cacheStats ?? .null }
        let commands = control.server.commands, jobs = control.jobs
        // The files go on the control's job queue: removing many is no work for the loop.
        commands.registerDeferred(.cacheClear) { [weak self] _, _, reply in
            guard let self else { throw ControlError(code: "unavailable", message: "cache.clear: the kiosk is stopping") }
            guard let cache = openCache() else {
                throw ControlError(code: "unavailable", message: "cache.clear: the asset cache \(directory) cannot be opened (see the log)")
            }
            let keeping = Set(refresh.keys)
            jobs.run({ cache.clear(keeping: keeping) }, then: { [weak self] freed in
                self?.noteCleared(freed)
                reply.succeed(["bytes_freed": .int(Int64(freed.bytes)), "entries_freed": .int(Int64(freed.entries)),
                               "kept": .int(Int64(keeping.count))])
            })
        }
        commands.register(.cacheRefresh, arguments: ["url"]) { [weak self] args, _ in
            guard let self else { throw ControlError(code: "unavailable", message: "cache.refresh: the kiosk is stopping") }
            if args.has("url") {
                let url = try args.string("url")
                guard url.utf8.count <= Self.maximumURLBytes else {
                    throw args.invalid("url", "is \(url.utf8.count) bytes long; no asset URL is longer than \(Self.maximumURLBytes)")
                }
                guard refreshNow(url) else {
                    let named = refresh.keys.sorted()
                    throw args.invalid("url", "'\(url)' is not an asset of the scenes shown; they name \(named.isEmpty ? "none" : named.joined(separator: ", "))")
                }
                return ["refreshing": .array([.string(url)])]
            }
            let urls = refresh.keys.sorted()
            for url in urls { refreshNow(url) }
            return ["refreshing": .array(urls.map(JSONValue.string))]
        }
    }

    private func noteCleared(_ freed: (bytes: Int, entries: Int)) {
        logLine("cache.clear: \(freed.entries) assets removed, \(freed.bytes) bytes freed")
    }

    /// `stats`' `cache`: the folder and limits, bytes and entries held, hits and misses of lookups, failed fetches
    /// by reason, and the assets shown stale (their last fetch failed) and missing (no copy yet), each with since
    /// when (ISO 8601 and seconds since the epoch) and why.
    var cacheStats: JSONValue {
        var members: [String: JSONValue] = [
            "dir": .string(directory),
            "max_bytes": .int(Int64(settings.totalBytes)),
            "max_asset_bytes": .int(Int64(settings.assetBytes)),
            "assets_named": .int(Int64(refresh.count)),
            "assets": .array(refresh.keys.sorted().map(assetValue)),
        ]
        guard let figures = cache?.figures else {
            // Not opened yet: no scene has named a URL.
            members["open"] = false
            return .object(members)
        }
        members["open"] = true
        members["bytes"] = .int(Int64(figures.bytes))
        members["entries"] = .int(Int64(figures.entries))
        members["hits"] = .int(Int64(figures.hits))
        members["misses"] = .int(Int64(figures.misses))
        members["evictions"] = .int(Int64(figures.evictions))
        members["removed_at_open"] = .int(Int64(figures.removedAtOpen))
        members["no_store_removed_at_open"] = .int(Int64(figures.noStoreRemovedAtOpen))
        members["cleared"] = .int(Int64(figures.cleared))
        members["failures"] = .object(figures.failures.mapValues { .int(Int64($0)) })
        members["failed_fetches"] = .int(Int64(figures.failures.values.reduce(0, +)))
        members["stale"] = .array(figures.stale.map(Self.failingValue))
        members["missing"] = .array(figures.missing.map(Self.failingValue))
        return .object(members)
    }

    /// One URL the scenes name: whether a copy is held, whether a fetch is under way, and the seconds to its next
    /// check (null while fetching), so an operator sees when a change on the server will show.
    private func assetValue(_ url: String) -> JSONValue {
        let seconds = nextCheck[url].map { instant -> JSONValue in
            let left = ContinuousClock.now.duration(to: instant)
            return .double(max(0, Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18))
        } ?? .null
        return ["url": .string(url), "cached": .bool(cache?.peek(url) != nil), "fetching": .bool(inFlight[url] != nil),
                "refresh_s": .int(Int64(refresh[url] ?? 0)), "next_check_s": seconds]
    }

    static func failingValue(_ failing: AssetCache.Failing) -> JSONValue {
        [
            "url": .string(failing.url),
            "since": .string(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: failing.since))),
            "since_epoch_s": .double(failing.since),
            "reason": .string(failing.reason),
            "message": .string(failing.message),
        ]
    }

    /// The `cache` event: `url` became stale (its fetches fail; `failing` says since when and why; `stale` false
    /// when no copy is held) or fresh again (`failing` nil).
    func staleChanged(_ url: String, _ failing: AssetCache.Failing?) {
        guard let control else { return }
        var data: [String: JSONValue] = ["url": .string(url), "cached": .bool(cache?.peek(url) != nil)]
        if let failing, case .object(let members) = Self.failingValue(failing) {
            data.merge(members) { $1 }
            data["stale"] = .bool(cache?.peek(url) != nil)
        } else {
            data["stale"] = false
        }
        control.server.broadcast(event: "cache", data: .object(data))
    }
}
