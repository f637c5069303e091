import Foundation
import KioskTestSupport
import XCTest

/// A headless kioskd whose scene waits on a plain page until the test shows `main` (a video opens when its page is
/// first shown, so a test subscribes to `video` events first and misses none): `widgets` (scene YAML lines) on
/// `main`, and `header` (top-level scene lines) above the pages.
enum VideoKiosk {
    static func start(in directory: URL, mode: String, widgets: [String], header: String = "",
                      extraArguments: [String] = [], environment: [String: String] = [:]) throws -> ControlledKioskd {
        let yaml = VideoTestScene.yaml(widgets: widgets, header: header)
        let file = directory.appendingPathComponent("scene.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return try ControlledKioskd(["run", "--backend", "headless", "--mode", mode, "--scene", file.path] + extraArguments,
                                    environment: environment)
    }
}

/// A headless 1920x1080 kioskd waiting to show `main`: the clip full screen, a seconds clock, and any
/// `extraWidgets` (scene YAML lines) beside them.
enum FullHDVideoKiosk {
    static func start(clip: String, scratch: String, extraWidgets: [String] = []) throws -> ControlledKioskd {
        let widgets = ["{id: clip, type: video, source: \(clip), loop: false, fit: fill, x: 0, y: 0, width: 100%, height: 100%}",
                       "{id: clock, type: clock, format: \"%H:%M:%S\", x: 40, y: 900, width: 600, height: 120, foreground: white, font: {size: 80}}"]
            + extraWidgets
        return try VideoKiosk.start(in: try KioskdProcess.scratchDirectory(scratch), mode: "1920x1080@60", widgets: widgets)
    }
}
