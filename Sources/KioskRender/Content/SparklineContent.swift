import CCairo
import KioskCore

/// A small line chart of a series: a polyline across the layer's width (the first value at the left edge, the last
/// at the right), an optional fill under it and a dot on the last point. A plain `Sendable` value, drawn on a render
/// worker.
public struct SparklineContent: CairoDrawnContent, Hashable {
    /// Oldest first. Non-finite values (NaN, infinities) are left out; the line joins their neighbours.
    public var values: [Double]
    public var color: Color
    /// Painted between the line and the layer's bottom edge.
    public var fill: Color?
    /// In pixels.
    public var lineWidth: Double
    /// The values at the bottom and top edges; values outside are clamped. Nil spans the series' own minimum and
    /// maximum, and a flat series is then drawn through the middle.
    public var range: ClosedRange<Double>?

    public init(values: [Double], color: Color, fill: Color? = nil, lineWidth: Double = 2,
                range: ClosedRange<Double>? = nil) {
        self.values = values; self.color = color; self.fill = fill; self.lineWidth = lineWidth; self.range = range
    }

    public var kind: String { "sparkline" }

    /// The radius of the dot on the last point, in pixels.
    public var dotRadius: Double { max(lineWidth * 1.5, 2) }

    /// Where each finite value is drawn in a layer of `size`, in order: the line's vertices. The chart is inset by the
    /// dot's radius so neither line nor dot is cut off at the edges. A lone value sits at the right edge.
    public func points(in size: Size) -> [(x: Double, y: Double)] {
        let finite = values.enumerated().filter { $0.element.isFinite }
        guard !finite.isEmpty else { return [] }
        let inset = min(dotRadius, Double(min(size.width, size.height)) / 2)
        let left = inset, right = Double(size.width) - inset
        let top = inset, bottom = Double(size.height) - inset
        let (low, high) = if let range, range.upperBound.isFinite, range.lowerBound.isFinite {
            (range.lowerBound, range.upperBound)
        } else {
            (finite.map(\.element).min()!, finite.map(\.element).max()!)
        }
        let span = high - low
        let lastIndex = values.count - 1
        return finite.map { index, value in
            let x = lastIndex == 0 ? right : left + (right - left) * Double(index) / Double(lastIndex)
            let fraction = span > 0 ? (min(max(value, low), high) - low) / span : 0.5
            return (x, bottom - (bottom - top) * fraction)
        }
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "sparkline content (\(values.count) values)" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let points = points(in: size)
        guard let last = points.last else { return }
        if let fill, points.count > 1 {
            cairo_move_to(cr, points[0].x, Double(size.height))
            for point in points { cairo_line_to(cr, point.x, point.y) }
            cairo_line_to(cr, last.x, Double(size.height))
            cairo_close_path(cr)
            setSource(cr, fill)
            cairo_fill(cr)
        }
        setSource(cr, color)
        if points.count > 1, lineWidth > 0 {
            cairo_move_to(cr, points[0].x, points[0].y)
            for point in points.dropFirst() { cairo_line_to(cr, point.x, point.y) }
            cairo_set_line_width(cr, lineWidth)
            cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
            cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
            cairo_stroke(cr)
        }
        cairo_arc(cr, last.x, last.y, dotRadius, 0, 2 * Double.pi)
        cairo_fill(cr)
    }

    public static func == (a: SparklineContent, b: SparklineContent) -> Bool {
        a.values == b.values && a.color == b.color && a.fill == b.fill && a.lineWidth == b.lineWidth
            && a.range == b.range
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(values); hasher.combine(color); hasher.combine(fill); hasher.combine(lineWidth)
        hasher.combine(range?.lowerBound); hasher.combine(range?.upperBound)
    }
}
