import Foundation
import KioskControl
import KioskCore
import KioskFetch
import KioskScene

/// The asset cache's figures (`stats` and `<prefix>/state` under `cache`), its `cache` event, and what the
/// `cache.clear` and `cache.refresh` commands (`ControlWiring+Cache`) do. Main thread.
extension RemoteAssetWiring {
    /// The longest URL `cache.refresh` takes: longer ones are no asset of a scene.
    static let maximumURLBytes = 8192

    /// Removes, off the loop, every cached asset the scenes do not name; `then` gets the bytes and entries freed and
    /// the number kept, on the loop. False when the cache cannot be opened.
    func clear(on jobs: BackgroundJobs, then: @escaping (_ bytes: Int, _ entries: Int, _ kept: Int) -> Void) -> Bool {
        guard let cache = openCache() else { return false }
        let keeping = Set(refresh.keys)
        jobs.run({ cache.clear(keeping: keeping) }, then: { [weak self] freed in
            self?.logLine("cache.clear: \(freed.entries) assets removed, \(freed.bytes) bytes freed")
            then(freed.bytes, freed.entries, keeping.count)
        })
        return true
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
