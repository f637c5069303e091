/// What a layer draws: a value describing the content (text and font, an image path, a colour), and the code that
/// paints it. `draw` runs on a render worker, never on the main thread; it must check `isCancelled` between
/// expensive steps and return early when it is true (the result would be dropped anyway).
///
/// Implementations live where drawing lives (KioskRender, with Cairo); the core only schedules them.
public protocol LayerContent: Sendable {
    /// Telemetry groups render times by kind (`text`, `image`, `clock`, `rect`).
    var kind: String { get }
    /// True when `draw` covers every pixel with alpha 1, so the compositor can copy instead of blend.
    var isOpaque: Bool { get }
    /// Paint into `surface` (already zero-filled, `surface.size` = the layer's size in pixels).
    func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws
}

extension LayerContent {
    public var isOpaque: Bool { false }
}
