import CCairo
import KioskCore

/// The pointer's arrow: white with a dark outline, its tip at the top-left corner of a 16x24 box, so a layer
/// holding it is placed with its origin on the pointer. A plain `Sendable` value, drawn on a render worker.
public struct CursorContent: CairoDrawnContent, Hashable {
    /// The box the arrow is drawn in.
    public static let size = Size(width: 16, height: 24)
    public static let fillColor = Color(red: 1, green: 1, blue: 1)
    public static let outlineColor = Color(red: 0, green: 0, blue: 0)

    public init() {}

    public var kind: String { "cursor" }
    public var isOpaque: Bool { false }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "cursor content" }

    /// The arrow for a cursor plane, turned as the output turns the scene (`rotation`), its hotspot on the tip's
    /// corner of the box. Drawn off the main thread (a background job), like every other drawing.
    public static func image(rotation: OutputRotation) throws -> CursorImage {
        let surface = LayerSurface(size: size)
        try CursorContent().draw(into: surface, isCancelled: { false })
        let pixels = (0..<size.height).flatMap { y in (0..<size.width).map { x in surface.pixel(x: x, y: y) } }
        return CursorImage(size: size, pixels: pixels, hotspot: (0, 0)).rotated(rotation)
    }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        // The classic arrow, outlined inside the box: tip, down the left edge, the notch, the tail, back to the tip.
        let points: [(Double, Double)] = [(1, 1), (1, 18), (5.5, 14), (8.5, 21), (11, 20), (8, 13), (13.5, 13)]
        cairo_new_path(cr)
        cairo_move_to(cr, points[0].0, points[0].1)
        for (x, y) in points.dropFirst() { cairo_line_to(cr, x, y) }
        cairo_close_path(cr)
        let fill = Self.fillColor, outline = Self.outlineColor
        cairo_set_source_rgba(cr, fill.red, fill.green, fill.blue, fill.alpha)
        cairo_fill_preserve(cr)
        cairo_set_line_width(cr, 1.5)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER)
        cairo_set_source_rgba(cr, outline.red, outline.green, outline.blue, outline.alpha)
        cairo_stroke(cr)
        let status = cairo_status(cr)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError("cursor content: cairo: \(String(cString: cairo_status_to_string(status)))")
        }
    }
}
