import Foundation
import KioskTestSupport

/// A headless kiosk in process whose scene waits on a plain page until the test shows `main` (`VideoKioskScene`),
/// over the config file `config`.
enum VideoKiosk {
    static func start(in directory: URL, mode: String, widgets: [String], header: String = "", config: String? = nil) throws -> InProcessKiosk {
        let scene = try VideoKioskScene.write(in: directory, widgets: widgets, header: header)
        return try InProcessKiosk(mode: mode, config: config) { $0.scene = scene.path }
    }
}
