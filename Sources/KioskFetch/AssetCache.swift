import Foundation
import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// How much the asset cache may hold. A plain value.
public struct CacheLimits: Sendable, Equatable {
    /// One asset at most (`cache.max_asset_mb`, 256 MiB): a larger download is aborted at this size.
    public var maxAssetBytes: Int
    /// The whole cache (`cache.max_mb`, 1024 MiB): past it, the least recently used assets outside the protected
    /// set are removed.
    public var maxTotalBytes: Int

    public init(maxAssetBytes: Int = 256 << 20, maxTotalBytes: Int = 1024 << 20) {
        self.maxAssetBytes = maxAssetBytes
        self.maxTotalBytes = maxTotalBytes
    }
}

/// What the cache knows of one asset, kept in `<key>.json` beside its data file. A plain value.
public struct AssetMetadata: Codable, Sendable, Equatable {
    public var url: String
    /// The data file's name in the cache folder: `<key>.<sha256>`, so a new version never overwrites the old one
    /// in place.
    public var file: String
    public var etag: String?
    public var lastModified: String?
    public var contentType: String?
    /// Wall-clock seconds since 1970 of the last successful fetch or revalidation.
    public var fetchedAt: Double
    public var size: Int
    public var sha256: String
    /// Wall-clock seconds of the last lookup: least recently used first out.
    public var lastUsed: Double
    /// The server's `Cache-Control`, as last sent (on the 200 or a later 304); nil for none, or metadata written
    /// before it was kept.
    public var cacheControl: CacheControl?
}

/// A cached asset: its complete file and what is known of it. A plain value.
public struct CachedAsset: Sendable, Equatable {
    public var path: String
    public var metadata: AssetMetadata
}

/// Remote assets on disk, safe against a crash or power cut at any moment: a download goes to a temporary file
/// (`.<key>.<random>.partial`, created with O_EXCL), is fsynced, checked against its `sha256:` pin if it has one,
/// and renamed to a name of its own (`<key>.<sha256>`); then the metadata (`<key>.json`) is replaced atomically
/// (AtomicFile) and the folder fsynced; only then is the old version's file removed. After a crash the metadata
/// names either the old file or the new one, and both exist. Opening the cache removes leftover temporary files,
/// data files no metadata names, and metadata whose file is missing or of the wrong size.
///
/// `<key>` is the first 32 hex digits of the URL's SHA-256. Lookups are in memory; files are written and removed
/// on the fetcher's worker (`fetch`'s process step), never on the main loop. Any thread; the index is locked.
public final class AssetCache: @unchecked Sendable {
    public let directory: String
    public let limits: CacheLimits
    private let state: Lock<State>
    private let clock: @Sendable () -> Double

    private struct State {
        var entries: [String: AssetMetadata] = [:]
        var hits = 0
        var misses = 0
        var evictions = 0
        var removedAtOpen = 0
        var noStoreRemovedAtOpen = 0
        /// Failed fetches, by `FetchFailure.reason`.
        var failures: [String: Int] = [:]
        /// URLs whose last fetch failed, with when the failures began and the latest one; removed by a success.
        var failing: [String: Failing] = [:]
        var cleared = 0
    }

    /// A URL whose fetches fail: since when (wall clock, the first failure in a row) and the latest reason.
    public struct Failing: Sendable, Equatable {
        public var url: String
        public var since: Double
        public var reason: String
        public var message: String
    }

    /// Figures for `stats`.
    public struct Figures: Sendable, Equatable {
        public var bytes: Int
        public var entries: Int
        public var hits: Int
        public var misses: Int
        public var evictions: Int
        /// Leftover temporary files, orphaned data files and broken metadata removed when the cache was opened.
        public var removedAtOpen: Int
        /// Assets the server sent with `Cache-Control: no-store`, removed when the cache was opened.
        public var noStoreRemovedAtOpen: Int
        /// Failed fetches by reason (`FetchFailure.reason`), since the cache was opened.
        public var failures: [String: Int]
        /// URLs whose last fetch failed while a copy is held and shown: stale, with since when.
        public var stale: [Failing]
        /// URLs whose fetches fail with no copy held: nothing to show yet.
        public var missing: [Failing]
        /// Assets removed by `clear`.
        public var cleared: Int
    }

    /// `$CACHE_DIRECTORY/assets` (systemd's `CacheDirectory=`); without it /var/cache/kioskd/assets for root, and
    /// `$XDG_CACHE_HOME/kioskd/assets` (`~/.cache/kioskd/assets`) for anyone else, who cannot write /var/cache.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment,
                                        root: Bool = geteuid() == 0) -> String {
        if let base = environment["CACHE_DIRECTORY"]?.split(separator: ":").first, !base.isEmpty {
            return "\(base)/assets"
        }
        if !root {
            if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return "\(xdg)/kioskd/assets" }
            if let home = environment["HOME"], home.hasPrefix("/"), home != "/" { return "\(home)/.cache/kioskd/assets" }
        }
        return "/var/cache/kioskd/assets"
    }

    /// Opens (and creates) the cache in `directory` and tidies it. Synchronous file I/O: at start, before the
    /// loop runs, or off it.
    ///
    /// - Throws: a folder that cannot be created or read, naming it.
    public init(directory: String, limits: CacheLimits = CacheLimits(),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) throws {
        self.directory = directory
        self.limits = limits
        self.clock = clock
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw SystemError("asset cache \(directory): cannot create the folder: \(error.localizedDescription)")
        }
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            throw SystemError("asset cache \(directory): cannot read the folder: \(error.localizedDescription)")
        }
        var entries: [String: AssetMetadata] = [:]
        var removed = 0, noStore = 0
        let decoder = JSONDecoder()
        for name in names where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let key = String(name.dropLast(5))
            let path = "\(directory)/\(name)"
            guard let data = FileManager.default.contents(atPath: path),
                  let metadata = try? decoder.decode(AssetMetadata.self, from: data),
                  Self.key(metadata.url) == key, metadata.file.hasPrefix(key + "."),
                  let size = Self.size(of: "\(directory)/\(metadata.file)"), size == metadata.size else {
                unlink(path)
                removed += 1
                continue
            }
            if metadata.cacheControl?.noStore == true {
                // Shown while the kiosk ran, never kept across a restart; its data file goes as an orphan below.
                unlink(path)
                noStore += 1
                continue
            }
            entries[key] = metadata
        }
        let named = Set(entries.values.map(\.file))
        for name in names where !name.hasSuffix(".json") || name.hasPrefix(".") {
            // Temporary files of downloads a crash cut short, and versions no metadata names any more.
            if name.hasSuffix(".partial") || !named.contains(name) {
                unlink("\(directory)/\(name)")
                removed += 1
            }
        }
        if removed + noStore > 0 { Self.syncFolder(directory) }
        state = Lock(State(entries: entries, removedAtOpen: removed, noStoreRemovedAtOpen: noStore))
    }

    /// The copy of `url` a cache in `directory` holds, read from its metadata without opening the cache (no
    /// tidying, no index): for a remote scene shown at start, before the cache is opened. Synchronous file I/O.
    public static func held(_ url: String, in directory: String) -> CachedAsset? {
        let key = Self.key(url)
        guard let data = FileManager.default.contents(atPath: "\(directory)/\(key).json"),
              let metadata = try? JSONDecoder().decode(AssetMetadata.self, from: data),
              metadata.url == url, metadata.file.hasPrefix(key + "."),
              let size = size(of: "\(directory)/\(metadata.file)"), size == metadata.size else { return nil }
        return CachedAsset(path: "\(directory)/\(metadata.file)", metadata: metadata)
    }

    /// The cache key of `url`: 32 hex digits of its SHA-256.
    public static func key(_ url: String) -> String {
        String(SHA256.hex(Array(url.utf8)).prefix(32))
    }

    /// The cached copy of `url`, if there is one; counts a hit or a miss and marks it used.
    public func lookup(_ url: String) -> CachedAsset? {
        let key = Self.key(url)
        let now = clock()
        return state.withLock { state in
            guard var metadata = state.entries[key] else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            metadata.lastUsed = now
            state.entries[key] = metadata
            return CachedAsset(path: "\(directory)/\(metadata.file)", metadata: metadata)
        }
    }

    /// The copy of `url` without counting or marking it.
    public func peek(_ url: String) -> CachedAsset? {
        state.withLock { state in
            state.entries[Self.key(url)].map { CachedAsset(path: "\(directory)/\($0.file)", metadata: $0) }
        }
    }

    public var figures: Figures {
        state.withLock { s in
            let failing = s.failing.values.sorted { ($0.since, $0.url) < ($1.since, $1.url) }
            return Figures(bytes: s.entries.values.reduce(0) { $0 + $1.size }, entries: s.entries.count, hits: s.hits,
                           misses: s.misses, evictions: s.evictions, removedAtOpen: s.removedAtOpen,
                           noStoreRemovedAtOpen: s.noStoreRemovedAtOpen, failures: s.failures,
                           stale: failing.filter { s.entries[Self.key($0.url)] != nil },
                           missing: failing.filter { s.entries[Self.key($0.url)] == nil }, cleared: s.cleared)
        }
    }

    /// Whether `url`'s last fetch failed; since when and why.
    public func failing(_ url: String) -> Failing? {
        state.withLock { $0.failing[url] }
    }

    /// Removes every asset whose URL is not in `keeping` (the ones on screen), and what their failures noted;
    /// returns the bytes and entries freed. A fetch under way for a removed URL still completes into the cache.
    /// File I/O: off the main loop.
    public func clear(keeping: Set<String>) -> (bytes: Int, entries: Int) {
        let keys = Set(keeping.map(Self.key))
        let removed = state.withLock { state -> [AssetMetadata] in
            let victims = state.entries.filter { !keys.contains($0.key) }
            for key in victims.keys { state.entries.removeValue(forKey: key) }
            for url in state.failing.keys where !keeping.contains(url) { state.failing.removeValue(forKey: url) }
            state.cleared += victims.count
            return Array(victims.values)
        }
        for metadata in removed {
            unlink("\(directory)/\(Self.key(metadata.url)).json")
            unlink("\(directory)/\(metadata.file)")
        }
        if !removed.isEmpty { Self.syncFolder(directory) }
        return (removed.reduce(0) { $0 + $1.size }, removed.count)
    }

    /// Fetches `url` into the cache (revalidating the copy held, if any) and gives `then`, on the main thread,
    /// the cached asset: the new version, or the one held when the server answered 304. On any failure, a pin
    /// that does not match included, the copy held stays as it was. After a new version, the least recently used
    /// assets are evicted down to `maxTotalBytes`, never one whose URL is in `protected`, nor the new one.
    ///
    /// - Parameters:
    ///   - pin: the asset's expected SHA-256 (hex, with or without `sha256:`); a download that differs is refused.
    ///   - check: run on the worker on a complete new version (its temporary file) before it replaces the copy
    ///     held: a message refuses it (`refused`), the copy held staying as it was. A remote scene is validated so.
    @discardableResult
    public func fetch(_ url: String, pin: String? = nil, protected: Set<String> = [], headers: [String: String] = [:],
                      proxy: String? = nil, fetcher: Fetcher, limits fetchLimits: FetchLimits? = nil,
                      check: (@Sendable (String) -> String?)? = nil,
                      then: @escaping (Result<CachedAsset, FetchError>) -> Void) -> FetchID {
        let key = Self.key(url)
        let held = peek(url)
        var limits = fetchLimits ?? FetchLimits(maxBodyBytes: self.limits.maxAssetBytes, totalTimeout: .seconds(600))
        limits.maxBodyBytes = min(limits.maxBodyBytes, self.limits.maxAssetBytes)
        let temporary = "\(directory)/.\(key).\(String(UInt64.random(in: .min ... .max), radix: 16)).partial"
        let request = FetchRequest(url: url, headers: headers, etag: held?.metadata.etag,
                                   lastModified: held?.metadata.lastModified, limits: limits, destination: .file(temporary),
                                   proxy: proxy)
        let expected = pin.map { ($0.hasPrefix("sha256:") ? String($0.dropFirst(7)) : $0).lowercased() }
        let protectedKeys = Set(protected.map(Self.key))
        return fetcher.fetch(request, process: { [self] outcome in
            let result = commit(outcome, key: key, expected: expected, protecting: protectedKeys, check: check)
            note(result, url: url)
            return result
        }, then: then)
    }

    /// Counts a failure by reason and marks the URL failing since its first failure in a row; a success clears it.
    private func note(_ result: Result<CachedAsset, FetchError>, url: String) {
        let now = clock()
        state.withLock { state in
            switch result {
            case .success: state.failing.removeValue(forKey: url)
            case .failure(let error):
                let reason = error.failure.reason
                state.failures[reason, default: 0] += 1
                let since = state.failing[url]?.since ?? now
                state.failing[url] = Failing(url: url, since: since, reason: reason, message: error.failure.description)
            }
        }
    }

    /// On the worker: the download checked and moved into place, the metadata replaced, old files removed.
    private func commit(_ outcome: Result<FetchResponse, FetchError>, key: String, expected: String?,
                        protecting protected: Set<String>, check: (@Sendable (String) -> String?)?) -> Result<CachedAsset, FetchError> {
        let response: FetchResponse
        switch outcome {
        case .failure(let error): return .failure(error)
        case .success(let r): response = r
        }
        let url = response.url
        let now = clock()
        if response.notModified {
            guard var metadata = state.withLock({ $0.entries[key] }) else {
                return .failure(FetchError(url: url, failure: .refused("the server answered 304 for a copy the cache no longer holds")))
            }
            metadata.fetchedAt = now
            metadata.lastUsed = now
            if let etag = response.etag { metadata.etag = etag }
            if let header = response.cacheControl { metadata.cacheControl = CacheControl(header: header) }
            if let error = writeMetadata(metadata, key: key, url: url) { return .failure(error) }
            state.withLock { $0.entries[key] = metadata }
            return .success(CachedAsset(path: "\(directory)/\(metadata.file)", metadata: metadata))
        }
        guard let temporary = response.file, let sha = response.sha256 else {
            return .failure(FetchError(url: url, failure: .file("no file was written")))
        }
        if let expected, expected != sha {
            unlink(temporary)
            return .failure(FetchError(url: url, failure: .refused("sha256 \(sha) does not match the pin sha256:\(expected); the cached version is kept")))
        }
        if let check, let refusal = check(temporary) {
            unlink(temporary)
            return .failure(FetchError(url: url, failure: .refused(refusal)))
        }
        let name = "\(key).\(sha)"
        let path = "\(directory)/\(name)"
        guard rename(temporary, path) == 0 else {
            let error = SystemError("rename \(temporary) to \(path)", errno: errno)
            unlink(temporary)
            return .failure(FetchError(url: url, failure: .file(error.description)))
        }
        Self.syncFolder(directory)
        let metadata = AssetMetadata(url: url, file: name, etag: response.etag, lastModified: response.lastModified,
                                     contentType: response.contentType, fetchedAt: now, size: response.bytes, sha256: sha, lastUsed: now,
                                     cacheControl: response.cacheControl.map { CacheControl(header: $0) })
        if let error = writeMetadata(metadata, key: key, url: url) { return .failure(error) }
        let old = state.withLock { state -> String? in
            let old = state.entries[key]?.file
            state.entries[key] = metadata
            return old
        }
        if let old, old != name { unlink("\(directory)/\(old)") }
        evict(protecting: protected.union([key]))
        return .success(CachedAsset(path: path, metadata: metadata))
    }

    private func writeMetadata(_ metadata: AssetMetadata, key: String, url: String) -> FetchError? {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try AtomicFile().write(Array(try encoder.encode(metadata)), to: "\(directory)/\(key).json")
            Self.syncFolder(directory)
            return nil
        } catch {
            return FetchError(url: url, failure: .file("metadata \(key).json: \(error)"))
        }
    }

    /// Removes least recently used assets outside `protected` (cache keys) until the cache fits `maxTotalBytes`.
    /// File I/O: off the main loop.
    public func evict(protecting protected: Set<String>) {
        let victims = state.withLock { state -> [AssetMetadata] in
            var total = state.entries.values.reduce(0) { $0 + $1.size }
            var victims: [AssetMetadata] = []
            for (key, metadata) in state.entries.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                guard total > limits.maxTotalBytes else { break }
                guard !protected.contains(key) else { continue }
                state.entries.removeValue(forKey: key)
                state.evictions += 1
                total -= metadata.size
                victims.append(metadata)
            }
            return victims
        }
        for metadata in victims {
            let key = Self.key(metadata.url)
            unlink("\(directory)/\(key).json")
            unlink("\(directory)/\(metadata.file)")
        }
        if !victims.isEmpty { Self.syncFolder(directory) }
    }

    private static func size(of path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int(info.st_size)
    }

    /// fsync(2) on the folder, so the renames and removals in it survive a power cut.
    static func syncFolder(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
