import KioskCore
import KioskRuntime
import KioskWeb
import Logging

/// Gives the scene runtime its web pages: WPE WebKit on the run's main loop, loaded at the first `web` widget.
/// Without WPE WebKit (not installed), web widgets show their placeholder and report why, and the rest of the scene
/// runs.
enum WebWiring {
    static func attach(to stage: SceneStage, loop: MainLoop, logger: Logger) {
        do {
            stage.webPages = try WPEWeb(loop: loop)
        } catch {
            logger.error("web widgets will show their placeholder: \(error)")
        }
    }
}
