import KioskCore
import KioskRuntime
import KioskVideo
import Logging

/// Gives the scene runtime its video players: GStreamer on the run's main loop. Without GStreamer (a missing
/// plugin), video widgets show their placeholder and report why, and the rest of the scene runs.
enum VideoWiring {
    static func attach(to stage: SceneStage, loop: MainLoop, logger: Logger) {
        do {
            stage.videoPlayers = try GStreamerVideo(loop: loop)
        } catch {
            logger.error("video widgets will show their placeholder: \(error)")
        }
    }
}
