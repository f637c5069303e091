import Foundation

/// The scene of a video test's kiosk: it waits on a plain page until the test shows `main` (a video opens when its
/// page is first shown, so a test subscribes to `video` events first and misses none): `widgets` (scene YAML lines)
/// on `main`, and `header` (top-level scene lines) above the pages.
public enum VideoKioskScene {
    /// Writes the scene to `scene.yaml` in `directory`; returns its URL.
    public static func write(in directory: URL, widgets: [String], header: String = "") throws -> URL {
        let yaml = header + """
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
        return file
    }

    /// The widgets of a 1920x1080 kiosk: `clip` full screen, a seconds clock, and `extraWidgets` beside them.
    public static func fullHDWidgets(clip: String, extraWidgets: [String] = []) -> [String] {
        ["{id: clip, type: video, source: \(clip), loop: false, fit: fill, x: 0, y: 0, width: 100%, height: 100%}",
         "{id: clock, type: clock, format: \"%H:%M:%S\", x: 40, y: 900, width: 600, height: 120, foreground: white, font: {size: 80}}"]
            + extraWidgets
    }
}
