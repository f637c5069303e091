import Foundation
import KioskTestSupport
import XCTest

/// A headless 1920x1080 kioskd whose scene waits on a plain page until the test shows `main`: the clip full screen,
/// a seconds clock, and any `extraWidgets` (scene YAML lines) beside them.
enum FullHDVideoKiosk {
    static func start(clip: String, scratch: String, extraWidgets: [String] = []) throws -> ControlledKioskd {
        let directory = try KioskdProcess.scratchDirectory(scratch)
        let widgets = ["{id: clip, type: video, source: \(clip), loop: false, fit: fill, x: 0, y: 0, width: 100%, height: 100%}",
                       "{id: clock, type: clock, format: \"%H:%M:%S\", x: 40, y: 900, width: 600, height: 120, foreground: white, font: {size: 80}}"]
            + extraWidgets
        let yaml = """
        pages:
          - name: waiting
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#101010"}
          - name: main
            widgets:
        \(widgets.map { "      - " + $0 }.joined(separator: "\n"))
        """
        let file = directory.appendingPathComponent("scene.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return try ControlledKioskd(["run", "--backend", "headless", "--mode", "1920x1080@60", "--scene", file.path])
    }
}
