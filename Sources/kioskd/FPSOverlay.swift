import KioskCore
import KioskRender

/// `--fps-overlay`: a small FPS / frame-time panel in the top right corner of the screen, above everything,
/// re-rendered once a second from the engine's statistics (YYFPSLabel counts ticks over at least a second).
/// Main thread.
final class FPSOverlay {
    private let layer: Layer
    private unowned let engine: LayerEngine
    private var timer: TimerHandle?

    init(engine: LayerEngine) {
        self.engine = engine
        let size = engine.rootLayer.frame.size
        let unit = max(4, min(size.width, size.height) / 40)
        layer = Layer(frame: Rect(x: size.width - unit * 14, y: unit * 2, width: unit * 12, height: unit * 2), name: "fps")
        layer.content = FPSOverlayContent(framesPerSecond: 0, frameMilliseconds: 0)
        layer.zPosition = 1000
        engine.rootLayer.addChild(layer)
        timer = engine.loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { [weak self] in self?.update() }
    }

    deinit { timer?.cancel() }

    private func update() {
        let stats = engine.stats
        layer.content = FPSOverlayContent(framesPerSecond: stats.fps, frameMilliseconds: stats.fps > 0 ? 1000 / stats.fps : 0,
                                          droppedFrames: stats.staleRendersDropped)
    }
}
