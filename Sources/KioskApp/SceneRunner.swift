import Foundation
import KioskCore
import KioskDisplay
import KioskFetch
import KioskRender
import KioskRuntime
import KioskScene
import Logging

/// Shows a scene file through the layer engine and keeps it live: data, clocks, tickers, pages, and a reload when
/// the file changes (or on SIGHUP). With `fpsOverlay`, every scene shown gets the `fps` widget on top. Lives on
/// the main thread.
final class SceneRunner {
    let engine: LayerEngine
    let stage: SceneStage
    let path: String
    /// What was wrong with the scene file at start when the diagnostic page is shown instead; nil when the scene
    /// itself is on screen.
    let startProblem: (any Error)?
    /// The diagnostic page shown for `startProblem`, until a valid scene replaces it.
    private var diagnosticScene: Scene?
    /// True while the diagnostic page is on screen.
    var showsDiagnosticPage: Bool { diagnosticScene != nil && stage.scene == diagnosticScene }
    /// What the diagnostic page waits for, for systemd's STATUS line.
    let diagnosticStatus: String
    /// The configuration problem shown on the diagnostic page from the start, if any.
    let configurationProblem: ConfigurationProblem?
    /// The signals this runner acts on (`follow`).
    private var signalListeners: [ListenerToken] = []
    /// SIGHUP while the scene shown is named by URL: revalidated now (`RemoteSceneWiring`).
    var remoteReload: ((_ completion: ((Bool) -> Void)?) -> Void)?

    /// A scene named by URL with no copy in the asset cache yet, at start.
    struct RemoteSceneNotHeld: Error, CustomStringConvertible {
        var url: String
        var directory: String
        var description: String {
            "no copy of the scene is in the asset cache (\(directory)) yet: it is being fetched, and shown once it arrives"
        }
    }

    /// What shows a scene, or a configuration, that cannot be shown: the diagnostic page for that file and error.
    typealias Substitute = (DiagnosticPage.Subject, any Error) throws -> Scene

    /// - Parameters:
    ///   - engine: the output's engine (`OutputSlots`), its tree laid out for the display it has or waits for.
    ///   - wall: the output's place in a video wall: the scene is laid out on the wall's canvas, and this output
    ///     shows its part.
    ///   - substitute: with it, a missing or invalid scene shows the scene it returns (the diagnostic page) and
    ///     the file stays watched; without it, the scene's error is thrown.
    ///   - problem: a configuration kioskd could not use (needs `substitute`): its diagnostic page is shown from
    ///     the start, and the scene file is neither read nor watched; a reload starts kioskd over.
    /// - Throws: the scene's validation errors (`SceneValidationError`).
    init(engine: LayerEngine, path: String, wall: WallSettings? = nil, watch: Bool, fpsOverlay: Bool, memory: KioskConfig.Memory = KioskConfig.Memory(),
         video: KioskConfig.Video = KioskConfig.Video(), cacheDirectory: String? = nil, webHangTimeout: Duration? = nil,
         substitute: Substitute? = nil, problem: ConfigurationProblem? = nil, logger: Logger) throws {
        // The asset cache's folder (`cache.dir`, else the default): where copies of a scene and fonts by URL are.
        let cacheDirectory = cacheDirectory ?? AssetCache.defaultDirectory()
        self.path = path
        self.engine = engine
        configurationProblem = problem
        let remote = RemoteAsset.isFetched(path)
        diagnosticStatus = problem.map { "\($0), waiting for it to be fixed and kioskd reloaded" }
            ?? (remote ? "scene \(path) cannot be shown, waiting for a valid copy from the server" : "scene \(path) cannot be shown, waiting for it to be fixed")
        let loop = engine.loop
        let limits = KioskConfig.sceneLimits(memory: memory, video: video)
        let adjust: @Sendable (Scene) -> Scene
        if fpsOverlay {
            adjust = { scene in scene.addingFPSWidget() }
        } else {
            adjust = { scene in scene }
        }
        var shown: Scene
        if let problem, let substitute {
            shown = try substitute(problem.subject, problem.error)
            startProblem = problem
            diagnosticScene = shown
        } else {
            do {
                let loaded: LoadedScene
                if remote {
                    // The copy from an earlier run, network or not; `RemoteSceneWiring` revalidates it.
                    let directory = cacheDirectory
                    guard let copy = AssetCache.held(path, in: directory) else { throw RemoteSceneNotHeld(url: path, directory: directory) }
                    loaded = try SceneLoader.load(remoteCopy: copy.path, url: path, limits: limits)
                } else {
                    loaded = try SceneLoader.load(path: path, limits: limits)
                }
                for warning in loaded.warnings { logger.warning("\(warning)") }
                shown = adjust(loaded.scene)
                startProblem = nil
            } catch {
                guard let substitute else { throw error }
                logger.error("scene \(path) cannot be shown; showing the diagnostic page until \(remote ? "a valid copy arrives" : "it is fixed"): \(error)")
                shown = try substitute(remote ? .remoteScene(path) : .scene(path), error)
                startProblem = error
                diagnosticScene = shown
            }
        }
        // Fonts by URL whose copies an earlier run cached: registered before the first text renders, so the scene
        // starts in them rather than switching from a fallback (new ones come with `RemoteAssetWiring`).
        let cachedFonts = shown.fonts.filter(RemoteAsset.looksRemote).compactMap { url in
            AssetCache.held(url, in: cacheDirectory).map(\.path).flatMap { FontFileCheck.problem(at: $0, named: url) == nil ? $0 : nil }
        }
        if !cachedFonts.isEmpty {
            do { try PangoFontMaps.addFontFiles(cachedFonts) } catch { logger.error("scene \(path): cached fonts: \(error)") }
        }
        stage = SceneStage(engine: engine, scene: shown, source: path, limits: limits, wall: wall)
        stage.adjustLoadedScene = adjust
        stage.preloadPages = memory.preloadPages ?? KioskConfig.Memory.defaultPreloadPages
        engine.surfaceBudgetBytes = (memory.surfaceBudgetMB ?? KioskConfig.Memory.defaultSurfaceBudgetMB) << 20
        VideoWiring.attach(to: stage, loop: loop, logger: logger)
        WebWiring.attach(to: stage, loop: loop, hangTimeout: webHangTimeout, logger: logger)
        if watch && problem == nil && !remote {
            do { try stage.watch(path: path) } catch where substitute != nil {
                // A kiosk keeps showing what it has; scene.load and SIGHUP still replace it.
                logger.error("\(error); the scene file is not watched for changes")
            }
        }
        if problem == nil {
            logger.info("scene \(path): \(stage.scene.pages.count) page(s), \(stage.scene.allWidgets.count) widget(s)\(watch ? ", reloaded on change" : "")")
        }
    }

    /// Acts on the run's signals for this runner's output: SIGHUP reads its scene file again (unless a configuration
    /// problem is shown: kioskd then starts over, `ServiceWiring.startOverOnReload`), SIGUSR1/SIGUSR2 hand its
    /// engine's display over and take it back. Each output's runner follows the signals itself.
    func follow(_ signals: SignalRouting, logger: Logger) {
        signalListeners = [
            signals.addHandoverListener { [weak engine = self.engine] signal in
                guard let engine else { return }
                MasterHandover.handle(signal, engine: engine, drm: engine.backend as? DRMBackend, logger: logger)
            },
        ]
        if configurationProblem == nil {
            signalListeners.append(signals.addReloadListener { [weak self] reload in
                self?.reload(then: reload.join())
            })
        }
    }

    /// SIGHUP: read the scene file shown again (the one `scene.load` switched to, if any), off the loop;
    /// `completion` hears on the loop whether the new version was installed.
    func reload(then completion: ((Bool) -> Void)? = nil) {
        if RemoteAsset.isFetched(stage.source) {
            guard let remoteReload else { completion?(false); return }
            return remoteReload(completion)
        }
        stage.reload(path: stage.source == "inline" ? path : stage.source, then: completion)
    }
}
