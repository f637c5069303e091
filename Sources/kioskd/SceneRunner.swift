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

    /// - Throws: the scene's validation errors (`SceneValidationError`), or the engine's.
    init(loop: MainLoop, backend: DisplayBackend, compositor: any Compositing, pool: RenderQueuePool, path: String,
         watch: Bool, fpsOverlay: Bool, logger: Logger) throws {
        self.path = path
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        let loaded = try SceneLoader.load(path: path)
        for warning in loaded.warnings { logger.warning("\(warning)") }
        let adjust: @Sendable (Scene) -> Scene
        if fpsOverlay {
            adjust = { scene in scene.addingFPSWidget() }
        } else {
            adjust = { scene in scene }
        }
        stage = SceneStage(engine: engine, scene: adjust(loaded.scene), source: path)
        stage.adjustLoadedScene = adjust
        if watch { try stage.watch(path: path) }
        logger.info("scene \(path): \(stage.scene.pages.count) page(s), \(stage.scene.allWidgets.count) widget(s)\(watch ? ", reloaded on change" : "")")
    }

    /// SIGHUP: read the scene file shown again (the one `scene.load` switched to, if any).
    func reload() {
        stage.reload(path: stage.source == "inline" ? path : stage.source)
    }
}
