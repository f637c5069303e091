import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender

/// Shows the reference dashboard through the layer engine: widgets render on the render pool, the compositor
/// copies only damage into scanout buffers, and the display link moves the ticker and progress bar on vblank.
/// Lives on the main thread.
final class DashboardRunner {
    let engine: LayerEngine
    let scene: ReferenceDashboard
    private var fpsLayer: Layer?
    private var lastFPSUpdate: MonotonicInstant?

    init(loop: MainLoop, backend: DisplayBackend, pool: RenderQueuePool, rotation: OutputRotation = .degrees0, fpsOverlay: Bool) throws {
        let compositor = try ShadowCompositor(size: backend.info.mode.size, rotation: rotation)
        // The scene is laid out in the rotated size; only the compositor knows the panel's.
        let size = compositor.sceneSize
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        let icons = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-icons").path
        scene = try ReferenceDashboard(size: size, imageDirectory: icons, clock: time(nil))
        engine.rootLayer.addChild(scene.root)
        if fpsOverlay {
            let unit = max(4, min(size.width, size.height) / 40)
            let layer = Layer(frame: Rect(x: size.width - unit * 14, y: unit * 2, width: unit * 12, height: unit * 2), name: "fps")
            layer.content = FPSOverlayContent(framesPerSecond: 0, frameMilliseconds: 0)
            layer.zPosition = 1000
            engine.rootLayer.addChild(layer)
            fpsLayer = layer
        }
        scene.animate(on: engine, clock: { _ in time(nil) }) { [weak self] tick in
            self?.updateFPS(at: tick.event.timestamp)
        }
    }

    /// The FPS overlay re-renders once a second (YYFPSLabel counts ticks over at least a second).
    private func updateFPS(at now: MonotonicInstant) {
        guard let fpsLayer else { return }
        if let last = lastFPSUpdate, (now - last) < .seconds(1) { return }
        lastFPSUpdate = now
        let stats = engine.stats
        fpsLayer.content = FPSOverlayContent(framesPerSecond: stats.fps, frameMilliseconds: stats.fps > 0 ? 1000 / stats.fps : 0,
                                             droppedFrames: stats.staleRendersDropped)
    }
}
