import KioskCore
import KioskDisplay
import Logging

/// Gives the engine the overlay planes of the output it drives (`DRMOverlayPlanes`, atomic DRM), so that videos and
/// `plane: true` images are scanned out directly where they qualify; elsewhere (headless, legacy commits, a driver
/// without overlay planes) every layer is composited, and the log says why. Main thread.
enum PlaneWiring {
    static func follow(_ engine: LayerEngine, rotation: OutputRotation, logger: Logger) {
        guard let drm = engine.backend as? DRMBackend else {
            engine.overlayPlanes = nil
            return
        }
        do {
            let planes = try DRMOverlayPlanes(backend: drm, rotation: rotation)
            engine.overlayPlanes = planes
            logger.info("connector \(drm.info.connector): layers that qualify go on overlay planes \(planes.planeIDs)")
        } catch {
            engine.overlayPlanes = nil
            logger.info("\(error)")
        }
    }
}
