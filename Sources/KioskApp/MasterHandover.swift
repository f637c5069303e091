import Glibc
import KioskCore
import KioskDisplay
import Logging

/// Hands the display to another DRM master and takes it back, on signals: SIGUSR1 stops presenting (state is
/// kept) and drops DRM master; SIGUSR2 takes master back (waiting with backoff while someone else holds it), sets
/// the mode again and redraws the whole screen. With the headless backend only the presenting stops and resumes.
/// Main thread: the handler runs from the loop's signalfd.
enum MasterHandover {
    static let signals: [Int32] = [SIGUSR1, SIGUSR2]

    static func handle(_ signal: Int32, engine: LayerEngine, drm: DRMBackend?, logger: Logger) {
        switch signal {
        case SIGUSR1:
            logger.notice("SIGUSR1: handing the display over")
            engine.yieldOutput()
            do {
                try drm?.dropMaster()
            } catch {
                logger.error("\(error)")
            }
        case SIGUSR2:
            logger.notice("SIGUSR2: taking the display back")
            engine.takeOutputBack()
        default:
            break
        }
    }
}
