import Foundation
import KioskCore
import KioskScene
import KioskRuntime
import KioskWeb
import Logging

/// Gives the scene runtime its web pages: WPE WebKit on the run's main loop, loaded at the first `web` widget.
/// Without WPE WebKit (not installed), web widgets show their placeholder and report why, and the rest of the scene
/// runs.
enum WebWiring {
    /// The `web:` section for WPE WebKit, before any page is made (WebKit reads it once, at its first page).
    static func configure(_ web: KioskConfig.Web) {
        WPEWeb.configure(dataDirectory: web.resolvedDataDirectory(environment: ProcessInfo.processInfo.environment),
                         memoryLimitMB: web.memoryLimitMB ?? KioskConfig.Web.defaultMemoryLimitMB)
    }

    /// - Parameter hangTimeout: `--web-hang-timeout` (hidden, for tests); nil keeps the stage's 10 s.
    static func attach(to stage: SceneStage, loop: MainLoop, hangTimeout: Duration? = nil, logger: Logger) {
        if let hangTimeout { stage.webHangTimeout = hangTimeout }
        do {
            stage.webPages = try WPEWeb(loop: loop)
        } catch {
            logger.error("web widgets will show their placeholder: \(error)")
        }
    }
}
