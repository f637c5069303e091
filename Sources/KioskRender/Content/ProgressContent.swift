import CCairo
import KioskCore

/// A horizontal progress bar: a track and a fill covering `value` (0...1) of it from the left, with fully rounded
/// ends when `isRounded`. A plain `Sendable` value, drawn on a render worker.
public struct ProgressContent: CairoDrawnContent, Hashable {
    /// Clamped to 0...1 when drawn.
    public var value: Double
    public var trackColor: Color
    public var fillColor: Color
    public var isRounded: Bool

    public init(value: Double, trackColor: Color = Color(rgb: 0x242733), fillColor: Color = Color(rgb: 0xFA9E28),
                isRounded: Bool = true) {
        self.value = value; self.trackColor = trackColor; self.fillColor = fillColor; self.isRounded = isRounded
    }

    public var kind: String { "progress" }

    public var isOpaque: Bool { !isRounded && trackColor.alpha >= 1 && fillColor.alpha >= 1 }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "progress content" }

    /// The fill replaces the track below it (SOURCE); a translucent fill would also replace what is below the layer.
    package var replacesPixelsBelow: Bool { fillColor.alpha < 1 }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let width = Double(size.width), height = Double(size.height)
        let fraction = value.isNaN ? 0 : min(max(value, 0), 1)
        addRoundedRectangle(cr, x: 0, y: 0, width: width, height: height, radius: isRounded ? height / 2 : 0)
        setSource(cr, trackColor)
        // The track's outline also clips the fill, so a short fill keeps the track's rounded left end.
        cairo_fill_preserve(cr)
        cairo_clip(cr)
        cairo_rectangle(cr, 0, 0, width * fraction, height)
        setSource(cr, fillColor)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_fill(cr)
    }
}
