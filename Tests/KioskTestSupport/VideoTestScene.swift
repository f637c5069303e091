/// The scene of the video tests: a plain page `waiting` shown first, and `widgets` (scene YAML lines) on page `main`,
/// under `header` (top-level scene lines). A video opens when its page is first shown, so a test subscribes to
/// `video` events, then shows `main`, and misses none.
public enum VideoTestScene {
    public static func yaml(widgets: [String], header: String = "") -> String {
        header + """
        pages:
          - name: waiting
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#101010"}
          - name: main
            widgets:
        \(widgets.map { "      - " + $0 }.joined(separator: "\n"))

        """
    }
}
