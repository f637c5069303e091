import Foundation
import KioskControl
import KioskCore
import KioskFetch
import KioskRuntime
import KioskScene
import Logging

/// Images and video clips that scenes name by URL: fetched into the asset cache (`AssetCache`, `$CACHE_DIRECTORY/assets`, else
/// /var/cache/kioskd/assets) and shown from there on every output. Each URL is fetched when a scene first names it,
/// then revalidated every `refresh` seconds (the image widget's; 300 by default; ETag / Last-Modified: an unchanged
/// image costs a 304); a new version is shown
/// once it is whole in the cache, its old picture staying until the new one has rendered. Offline, the cached copy
/// is shown with no error on screen; a failure is logged once until the URL succeeds again, sent as an `error`
/// event (`remote_asset`), and tried again with backoff. Nothing of this starts (no fetcher, no worker thread, no
/// libcurl) until a scene names a URL. The server's `Cache-Control` sets the time to the next check
/// (`CacheControl`); the `cache:` section sets the folder, the limits and the proxy. `stats`' `cache`, the `cache`
/// event and what `cache.clear` and `cache.refresh` do are in `RemoteAssetWiring+Commands`; the commands are
/// registered by `ControlWiring+Cache`. Main thread.
final class RemoteAssetWiring: RemoteAssetSource {

    private let loop: MainLoop
    private let outputs: KioskOutputs
    private(set) weak var control: ControlWiring?
    private let logger: Logger
    let settings: KioskConfig.Cache
    let directory: String
    private(set) var cache: AssetCache?
    private var cacheFailed = false
    private var fetcher: Fetcher?
    private var backoff = FetchBackoff(initial: .seconds(2), maximum: .seconds(ImageProperties.defaultRefreshSeconds))
    /// The URLs every output's scene names, with the shortest `refresh` (seconds) of the widgets that name each.
    private(set) var refresh: [String: Int] = [:]
    /// The URLs the scenes name, each with its next fetch (or the fetch under way).
    private(set) var timers: [String: TimerHandle] = [:]
    private(set) var inFlight: [String: FetchID] = [:]
    /// When each URL's timer fires, for `stats`.
    private(set) var nextCheck: [String: ContinuousClock.Instant] = [:]
    /// The file each URL was last shown from: a fetch that keeps it changes nothing on screen.
    private var shown: [String: String] = [:]
    private var failing: Set<String> = []
    private var listeners: [ListenerToken] = []

    init(loop: MainLoop, outputs: KioskOutputs, control: ControlWiring?, settings: KioskConfig.Cache = KioskConfig.Cache(), logger: Logger) {
        self.loop = loop
        self.outputs = outputs
        self.control = control
        self.logger = logger
        self.settings = settings
        directory = settings.directory ?? AssetCache.defaultDirectory()
        control?.remoteAssets = self
        for output in outputs.outputs {
            output.stage.builderRemoteAssets = self
            listeners.append(output.stage.addEventListener { [weak self] event in
                if case .sceneLoaded = event { self?.follow() }
            })
        }
        follow()
    }

    func stop() {
        for timer in timers.values { timer.cancel() }
        timers = [:]
        for id in inFlight.values { fetcher?.cancel(id) }
        inFlight = [:]
    }

    // MARK: RemoteAssetSource

    func stageAssetsChanged() { follow() }

    func file(for url: String) -> String? {
        guard let cache = openCache() else { return nil }
        let file = cache.lookup(url)?.path
        if let file { shown[url] = file }
        return file
    }

    // MARK: Fetching

    /// The URLs every output's scene names now: new ones fetched at once, forgotten ones no longer refreshed.
    private func follow() {
        refresh = [:]
        for output in outputs.outputs {
            refresh.merge(output.stage.remoteAssets) { min($0, $1) }
        }
        let wanted = Set(refresh.keys)
        for url in timers.keys where !wanted.contains(url) {
            timers.removeValue(forKey: url)?.cancel()
            nextCheck[url] = nil
            if let id = inFlight.removeValue(forKey: url) { fetcher?.cancel(id) }
        }
        for url in wanted.sorted() where timers[url] == nil && inFlight[url] == nil {
            // A copy from an earlier run is shown at once, network or not; the fetch then revalidates it.
            let held = openCache()?.peek(url)
            if shown[url] == nil, let file = held?.path {
                shown[url] = file
                for output in outputs.outputs { output.stage.remoteAssetChanged(url) }
            }
            // A copy still fresh by its max-age is not revalidated before it expires, not even at start.
            let fresh = held.map { asset in
                (asset.metadata.cacheControl ?? CacheControl()).freshSeconds(fetchedAt: asset.metadata.fetchedAt, now: Date().timeIntervalSince1970,
                                                                            refresh: refresh[url] ?? ImageProperties.defaultRefreshSeconds)
            } ?? 0
            if fresh > 0 {
                schedule(url, after: .seconds(fresh))
            } else {
                fetch(url)
            }
        }
    }

    /// The fetcher, made on first use (it starts the worker thread and loads libcurl).
    func sharedFetcher() throws -> Fetcher {
        if let fetcher { return fetcher }
        let made = try Fetcher(loop: loop)
        fetcher = made
        return made
    }

    /// URLs outside the scenes' assets that eviction must spare: the scenes fetched by URL (`RemoteSceneWiring`).
    var alsoProtected: () -> Set<String> = { [] }

    /// Every URL eviction must spare now.
    var protectedURLs: Set<String> { Set(refresh.keys).union(alsoProtected()) }

    /// Revalidates `url` now: its timer cancelled, a fetch started unless one is under way. Whether it was one
    /// the scenes name.
    @discardableResult
    func refreshNow(_ url: String) -> Bool {
        guard refresh[url] != nil else { return false }
        guard inFlight[url] == nil else { return true }
        timers.removeValue(forKey: url)?.cancel()
        fetch(url)
        return true
    }

    /// The next check of `url`, `after` from now.
    private func schedule(_ url: String, after: Duration) {
        nextCheck[url] = ContinuousClock.now + after
        timers[url] = loop.addTimer(after: after) { [weak self] in self?.fetch(url) }
    }

    private func fetch(_ url: String) {
        timers[url] = nil
        nextCheck[url] = nil
        guard let cache = openCache() else { return }
        let fetcher: Fetcher
        do { fetcher = try sharedFetcher() } catch {
            report(url, "cannot start the fetcher: \(error)")
            return
        }
        let protected = protectedURLs
        inFlight[url] = cache.fetch(url, protected: protected, proxy: settings.proxy, fetcher: fetcher) { [weak self] result in
            self?.fetched(url, result)
        }
    }

    private func fetched(_ url: String, _ result: Result<CachedAsset, FetchError>) {
        guard inFlight.removeValue(forKey: url) != nil else { return }
        let next: Duration
        switch result {
        case .success(let asset):
            backoff.succeeded(url)
            if failing.remove(url) != nil {
                logger.notice("\(kind(url)) \(url): fetched again")
                staleChanged(url, nil)
            }
            if shown[url] != asset.path {
                shown[url] = asset.path
                for output in outputs.outputs { output.stage.remoteAssetChanged(url) }
            }
            let seconds = (asset.metadata.cacheControl ?? CacheControl()).secondsToNextCheck(refresh: refresh[url] ?? ImageProperties.defaultRefreshSeconds)
            next = .seconds(seconds)
        case .failure(let error):
            next = min(backoff.failed(url), .seconds(refresh[url] ?? ImageProperties.defaultRefreshSeconds))
            let wasFailing = failing.contains(url)
            report(url, "\(error.failure)\(shown[url] != nil ? "; the cached copy stays on screen" : ""); tried again in \(Int(next.components.seconds)) s")
            if !wasFailing { staleChanged(url, cache?.failing(url)) }
        }
        schedule(url, after: next)
    }

    func logLine(_ words: String) { logger.notice("\(words)") }

    private func report(_ url: String, _ words: String) {
        let message = "\(kind(url)) \(url): \(words)"
        if failing.insert(url).inserted { logger.warning("\(message)") } else { logger.debug("\(message)") }
        control?.server.broadcast(event: "error", data: ["code": "remote_asset", "message": .string(message)])
    }

    /// What `url` is to the scenes shown, naming it in logs and events: "video" for a playlist item, "font",
    /// "background image", else "image".
    private func kind(_ url: String) -> String {
        let scenes = outputs.outputs.map(\.stage.scene)
        if scenes.contains(where: { $0.fonts.contains(url) }) { return "font" }
        if scenes.contains(where: { $0.backgroundImage?.path == url }) { return "background image" }
        let video = outputs.outputs.contains { output in
            output.stage.remoteAssets[url] != nil
                && !output.stage.scene.allWidgets.contains { if case .image(let i) = $0.content { i.path == url } else { false } }
        }
        return video ? "video" : "image"
    }

    /// The cache, opened on first use (synchronous file I/O once: a folder listing and the metadata files).
    func openCache() -> AssetCache? {
        if let cache { return cache }
        guard !cacheFailed else { return nil }
        do {
            cache = try AssetCache(directory: directory, limits: CacheLimits(maxAssetBytes: settings.assetBytes, maxTotalBytes: settings.totalBytes))
        } catch {
            cacheFailed = true
            logger.error("\(error); images named by URL are not shown (the unit's CacheDirectory=, or CACHE_DIRECTORY)")
            control?.server.broadcast(event: "error", data: ["code": "remote_asset", "message": .string("\(error)")])
        }
        return cache
    }
}
