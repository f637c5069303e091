/// `kioskd run --fps-overlay`: the scene's own `fps` widget laid over every page, in the top right corner.
extension Scene {
    /// This scene with an `fps` widget added last (so on top) to each page, sized as a share of the page so it
    /// fits any display. An immutable value; any thread.
    public func addingFPSWidget() -> Scene {
        var scene = self
        for index in scene.pages.indices {
            let page = scene.pages[index]
            let widget = Widget(
                id: nil, content: .fps,
                frame: Frame(x: .percent(78), y: .percent(2), width: .percent(20), height: .percent(6)),
                grow: 0, style: Style(), onChange: nil,
                location: SourceLocation(file: "--fps-overlay", line: 1, column: 1))
            scene.pages[index].widgets = page.widgets + [widget]
        }
        return scene
    }
}
