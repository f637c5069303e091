import Foundation
import KioskControl
import KioskCore
import KioskFetch
import KioskRuntime
import KioskScene
import Logging

/// Scenes named by URL (`--scene https://…`, an output's `scene:`, `scene.load {url}`): the scene file is fetched
/// into the asset cache like an image and revalidated every `refresh` (60 s; ETag / Last-Modified, so an unchanged
/// scene costs a 304) and at SIGHUP. A new version is validated on the fetch worker before it replaces the cached
/// copy: one that fails validation is refused, the copy held and the scene on screen stay, and the located errors
/// (`https://host/scene.yaml:LINE:COL: path: problem`) go out as an `error` event (`invalid_scene`). A valid new
/// version replaces the scene as `scene.load` does, complete at a frame boundary.
///
/// At start (`SceneRunner`) the cached copy is shown at once, network or not; with none, the diagnostic page says
/// which URL is missing and why (the fetch's failure, once known), and the scene replaces it when it arrives.
/// Relative names in a remote scene resolve against its URL (the decoder's `resolvedAgainstSceneURL`); absolute
/// paths stay files on the board. Main thread.
final class RemoteSceneWiring {
    /// How often a scene named by URL is revalidated.
    static let refresh: Duration = .seconds(60)

    private let loop: MainLoop
    private let outputs: KioskOutputs
    private let assets: RemoteAssetWiring
    private weak var control: ControlWiring?
    private let logger: Logger
    private var backoff = FetchBackoff(initial: .seconds(2), maximum: RemoteSceneWiring.refresh)
    /// The URLs the outputs show, each with its next revalidation.
    private var timers: [String: TimerHandle] = [:]
    private var inFlight: [String: FetchID] = [:]
    /// Who waits on the fetch under way of a URL (`scene.load`, SIGHUP).
    private var waiting: [String: [(Result<CachedAsset, FetchError>) -> Void]] = [:]
    /// The cached file each URL was last shown from: a fetch that keeps it changes nothing on screen.
    private var shown: [String: String] = [:]
    private var failing: Set<String> = []
    private var listeners: [ListenerToken] = []

    init(loop: MainLoop, outputs: KioskOutputs, assets: RemoteAssetWiring, control: ControlWiring?, logger: Logger) {
        self.loop = loop
        self.outputs = outputs
        self.assets = assets
        self.control = control
        self.logger = logger
        assets.alsoProtected = { [weak self] in self?.urls ?? [] }
        for output in outputs.outputs {
            let url = output.stage.source
            if RemoteAsset.isFetched(url), !output.runner.showsDiagnosticPage {
                shown[url] = AssetCache.held(url, in: assets.directory)?.path
            }
            listeners.append(output.stage.addEventListener { [weak self] event in
                if case .sceneLoaded = event { self?.follow() }
            })
            output.runner.remoteReload = { [weak self, unowned output] completion in self?.reload(url: output.stage.source, then: completion) }
        }
        follow()
    }

    func stop() {
        for timer in timers.values { timer.cancel() }
        timers = [:]
        // Only a fetch under way has a fetcher to cancel it on: none is made here.
        if !inFlight.isEmpty, let fetcher = try? assets.sharedFetcher() {
            for id in inFlight.values { fetcher.cancel(id) }
        }
        inFlight = [:]
    }

    /// The URLs of the scenes the outputs show.
    private var urls: Set<String> {
        Set(outputs.outputs.map(\.stage.source).filter(RemoteAsset.isFetched))
    }

    /// New scene URLs fetched at once; those no output shows any more no longer revalidated.
    private func follow() {
        let wanted = urls
        for url in timers.keys where !wanted.contains(url) { timers.removeValue(forKey: url)?.cancel() }
        for url in wanted.sorted() where timers[url] == nil && inFlight[url] == nil { fetch(url) }
    }

    // MARK: Loading

    /// `scene.load {url}` on `stage`: the scene fetched (or revalidated) now and shown; offline, the cached copy.
    /// `completion` hears whether it is being shown, or why not: a URL that cannot be fetched with no copy held
    /// (`io_error`), a scene that fails validation (`invalid_scene`, its located errors).
    func load(_ url: String, on stage: SceneStage, then completion: @escaping (Result<Void, StageError>) -> Void) {
        fetch(url) { [weak self, weak stage] result in
            guard let self, let stage else { return }
            switch result {
            case .success(let asset):
                self.show(asset.path, url: url, on: stage, then: completion)
            case .failure(let error):
                if let refusal = Self.invalidScene(error) {
                    return completion(.failure(StageError(.invalidScene, refusal)))
                }
                guard let held = self.assets.openCache()?.peek(url) else {
                    return completion(.failure(StageError(.ioError, "\(error); no copy of the scene is in the asset cache")))
                }
                self.logger.warning("scene \(url): \(error); showing the cached copy")
                self.show(held.path, url: url, on: stage, then: completion)
            }
        }
    }

    /// SIGHUP on an output showing a scene by URL: revalidated now; `completion` hears whether a new version (or
    /// the first, over the diagnostic page) was installed.
    private func reload(url: String, then completion: ((Bool) -> Void)?) {
        guard RemoteAsset.isFetched(url) else { completion?(false); return }
        fetch(url) { result in
            if case .success = result { completion?(true) } else { completion?(false) }
        }
    }

    private func show(_ file: String, url: String, on stage: SceneStage, then completion: @escaping (Result<Void, StageError>) -> Void) {
        shown[url] = file
        stage.loadScene(remoteCopy: file, url: url) { [weak self] result in
            if case .failure(let error) = result {
                self?.logger.error("scene \(url): the cached copy cannot be shown: \(error.message)")
            }
            completion(result)
        }
    }

    // MARK: Fetching

    /// The message of a new version refused by validation (the located errors), or nil for any other failure.
    private static func invalidScene(_ error: FetchError) -> String? {
        guard case .refused(let text) = error.failure, text.hasPrefix(refusalPrefix) else { return nil }
        return String(text.dropFirst(refusalPrefix.count))
    }

    private static let refusalPrefix = "invalid scene: "

    private func fetch(_ url: String, then waiter: ((Result<CachedAsset, FetchError>) -> Void)? = nil) {
        if let waiter { waiting[url, default: []].append(waiter) }
        guard inFlight[url] == nil else { return }
        timers.removeValue(forKey: url)?.cancel()
        guard let cache = assets.openCache() else {
            return fetched(url, .failure(FetchError(url: url, failure: .file("the asset cache cannot be opened"))))
        }
        let fetcher: Fetcher
        do { fetcher = try assets.sharedFetcher() } catch {
            return fetched(url, .failure(FetchError(url: url, failure: .file("cannot start the fetcher: \(error)"))))
        }
        let limits = outputs.first.stage.limits
        // The scene file's own limit (4 MiB by default): a larger body is cut off at it, never written whole.
        let fetchLimits = FetchLimits(maxBodyBytes: limits.maximumBytes, totalTimeout: .seconds(60))
        inFlight[url] = cache.fetch(url, protected: assets.protectedURLs, fetcher: fetcher, limits: fetchLimits, check: { file in
            do throws(SceneValidationError) {
                _ = try SceneLoader.load(remoteCopy: file, url: url, limits: limits)
                return nil
            } catch {
                return Self.refusalPrefix + error.description
            }
        }) { [weak self] result in
            self?.fetched(url, result)
        }
    }

    private func fetched(_ url: String, _ result: Result<CachedAsset, FetchError>) {
        inFlight[url] = nil
        let next: Duration
        switch result {
        case .success(let asset):
            backoff.succeeded(url)
            if failing.remove(url) != nil { logger.notice("scene \(url): fetched again") }
            for output in outputs.outputs where output.stage.source == url {
                // A new version, or the first over the diagnostic page shown for want of a copy.
                guard shown[url] != asset.path || output.runner.showsDiagnosticPage else { continue }
                logger.notice("scene \(url): \(shown[url] == nil ? "fetched" : "a new version"), shown")
                show(asset.path, url: url, on: output.stage) { [weak self] result in
                    if case .failure(let error) = result {
                        self?.control?.server.broadcast(event: "error", data: ["code": .string(error.code.rawValue), "message": .string(error.message)])
                    }
                }
            }
            next = Self.refresh
        case .failure(let error):
            next = min(backoff.failed(url), Self.refresh)
            let held = shown[url] != nil || assets.openCache()?.peek(url) != nil
            if let refusal = Self.invalidScene(error) {
                let message = "scene \(url): the new version is refused\(held ? ", the cached one stays" : ""):\n\(refusal)"
                logger.error("\(message)")
                control?.server.broadcast(event: "error", data: ["code": "invalid_scene", "message": .string(message)])
                showOnDiagnosticPage(url, "the version on the server is not a valid scene:\n\(refusal)")
            } else {
                let message = "scene \(url): \(error.failure)\(held ? "; the cached copy stays on screen" : ""); tried again in \(Int(next.components.seconds)) s"
                if failing.insert(url).inserted { logger.warning("\(message)") } else { logger.debug("\(message)") }
                control?.server.broadcast(event: "error", data: ["code": "remote_scene", "message": .string(message)])
                showOnDiagnosticPage(url, "no copy of the scene is in the asset cache yet, and fetching it failed: \(error); tried again in \(Int(next.components.seconds)) s")
            }
        }
        if urls.contains(url) {
            timers[url]?.cancel()
            timers[url] = loop.addTimer(after: next) { [weak self] in
                self?.timers[url] = nil
                self?.fetch(url)
            }
        }
        for waiter in waiting.removeValue(forKey: url) ?? [] { waiter(result) }
    }

    /// Puts `problem` on the diagnostic page of the outputs that wait for `url`'s first copy.
    private func showOnDiagnosticPage(_ url: String, _ problem: String) {
        for output in outputs.outputs where output.stage.source == url && output.runner.showsDiagnosticPage {
            try? output.stage.setData(["problem": problem])
        }
    }
}
