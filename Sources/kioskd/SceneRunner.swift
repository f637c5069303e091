import Foundation
import KioskCore
import KioskRender
import KioskRuntime
import Logging

/// Shows a scene file through the layer engine and keeps it live: data, clocks, tickers, pages, and a reload when
/// the file changes (or on SIGHUP). Lives on the main thread.
final class SceneRunner {
    let engine: LayerEngine
    let stage: SceneStage
    let path: String
    private var fpsLayer: Layer?
    private var fpsTimer: TimerHandle?

    /// - Throws: the scene's validation errors (`SceneValidationError`), or the engine's.
    init(loop: MainLoop, backend: DisplayBackend, compositor: any Compositing, pool: RenderQueuePool, path: String,
         watch: Bool, fpsOverlay: Bool, logger: Logger) throws {
        self.path = path
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        stage = try SceneStage(engine: engine, path: path)
        if watch { try stage.watch(path: path) }
        if fpsOverlay {
            let size = engine.rootLayer.frame.size
            let unit = max(4, min(size.width, size.height) / 40)
            let layer = Layer(frame: Rect(x: size.width - unit * 14, y: unit * 2, width: unit * 12, height: unit * 2), name: "fps")
            layer.content = FPSOverlayContent(framesPerSecond: 0, frameMilliseconds: 0)
            layer.zPosition = 1000
            engine.rootLayer.addChild(layer)
            fpsLayer = layer
            fpsTimer = loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { [weak self] in self?.updateFPS() }
        }
        logger.info("scene \(path): \(stage.scene.pages.count) page(s), \(stage.scene.allWidgets.count) widget(s)\(watch ? ", reloaded on change" : "")")
    }

    deinit { fpsTimer?.cancel() }

    /// SIGHUP: read the scene file shown again (the one `scene.load` switched to, if any).
    func reload() {
        stage.reload(path: stage.source == "inline" ? path : stage.source)
    }

    private func updateFPS() {
        let stats = engine.stats
        fpsLayer?.content = FPSOverlayContent(framesPerSecond: stats.fps, frameMilliseconds: stats.fps > 0 ? 1000 / stats.fps : 0,
                                              droppedFrames: stats.staleRendersDropped)
    }
}
