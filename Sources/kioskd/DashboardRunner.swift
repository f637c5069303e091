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
    private var fpsOverlay: FPSOverlay?

    init(loop: MainLoop, backend: DisplayBackend, pool: RenderQueuePool, rotation: OutputRotation = .degrees0, fpsOverlay: Bool) throws {
        let compositor = try ShadowCompositor(size: backend.info.mode.size, rotation: rotation)
        // The scene is laid out in the rotated size; only the compositor knows the panel's.
        let size = compositor.sceneSize
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        let icons = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-icons").path
        scene = try ReferenceDashboard(size: size, imageDirectory: icons, clock: time(nil))
        engine.rootLayer.addChild(scene.root)
        if fpsOverlay { self.fpsOverlay = FPSOverlay(engine: engine) }
        scene.animate(on: engine, clock: { _ in time(nil) })
    }
}
