import Foundation
import KioskCore
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

    /// - Parameter substitute: with it, a missing or invalid scene shows the scene it returns (the diagnostic
    ///   page) and the file stays watched; without it, the scene's error is thrown.
    /// - Throws: the scene's validation errors (`SceneValidationError`), or the engine's.
    init(loop: MainLoop, backend: DisplayBackend, compositor: any Compositing, pool: RenderQueuePool, path: String,
         watch: Bool, fpsOverlay: Bool, substitute: ((any Error) throws -> Scene)? = nil, logger: Logger) throws {
        self.path = path
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        let adjust: @Sendable (Scene) -> Scene
        if fpsOverlay {
            adjust = { scene in scene.addingFPSWidget() }
        } else {
            adjust = { scene in scene }
        }
        var shown: Scene
        do {
            let loaded = try SceneLoader.load(path: path)
            for warning in loaded.warnings { logger.warning("\(warning)") }
            shown = adjust(loaded.scene)
            startProblem = nil
        } catch {
            guard let substitute else { throw error }
            logger.error("scene \(path) cannot be shown; showing the diagnostic page until it is fixed: \(error)")
            shown = try substitute(error)
            startProblem = error
            diagnosticScene = shown
        }
        stage = SceneStage(engine: engine, scene: shown, source: path)
        stage.adjustLoadedScene = adjust
        VideoWiring.attach(to: stage, loop: loop, logger: logger)
        if watch {
            do { try stage.watch(path: path) } catch where substitute != nil {
                // A kiosk keeps showing what it has; scene.load and SIGHUP still replace it.
                logger.error("\(error); the scene file is not watched for changes")
            }
        }
        logger.info("scene \(path): \(stage.scene.pages.count) page(s), \(stage.scene.allWidgets.count) widget(s)\(watch ? ", reloaded on change" : "")")
    }

    /// SIGHUP: read the scene file shown again (the one `scene.load` switched to, if any), off the loop;
    /// `completion` hears on the loop whether the new version was installed.
    func reload(then completion: ((Bool) -> Void)? = nil) {
        stage.reload(path: stage.source == "inline" ? path : stage.source, then: completion)
    }
}
