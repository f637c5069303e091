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
    /// True for a plain fill (a solid rectangle with no corners or border to antialias), which the compositor
    /// draws straight into the damaged part of the shadow buffer at every composition: the layer gets no render
    /// and holds no surface. Such a content must be a `Hashable` value, so the frame diff can tell
    /// whether it changed.
    var compositesWithoutSurface: Bool { get }
    /// A finished surface of this content at `size` to show as it is, shared with every layer that shows the same
    /// content at the same size (a decoded image), or nil to draw into a fresh surface. Whoever returns one never
    /// writes it again, and nobody else writes it: it may be on screen on several layers. Runs on a render worker.
    func sharedSurface(size: Size, isCancelled: () -> Bool) throws -> LayerSurface?
}

extension LayerContent {
    public var isOpaque: Bool { false }
    public var compositesWithoutSurface: Bool { false }
    public func sharedSurface(size: Size, isCancelled: () -> Bool) throws -> LayerSurface? { nil }

    /// Whether two contents are equal values (false when either is not `Hashable`).
    public func isSameValue(as other: any LayerContent) -> Bool {
        guard let a = self as? any Hashable, let b = other as? any Hashable else { return false }
        return AnyHashable(a) == AnyHashable(b)
    }
}
