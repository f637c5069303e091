import Foundation
import KioskTestSupport
import XCTest

/// A headless 1920x1080 kioskd waiting to show `main` (`VideoKioskScene`): the clip full screen, a seconds clock,
/// and any `extraWidgets` (scene YAML lines) beside them.
enum FullHDVideoKiosk {
    static func start(clip: String, scratch: String, extraWidgets: [String] = []) throws -> ControlledKioskd {
        let scene = try VideoKioskScene.write(in: try KioskdProcess.scratchDirectory(scratch),
                                              widgets: VideoKioskScene.fullHDWidgets(clip: clip, extraWidgets: extraWidgets))
        return try ControlledKioskd(["run", "--backend", "headless", "--mode", "1920x1080@60", "--scene", scene.path])
    }
}
