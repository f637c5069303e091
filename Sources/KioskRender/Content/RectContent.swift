#if canImport(Glibc)
import Glibc
#endif
import CCairo
import KioskCore

/// A filled rectangle: a solid colour or a linear gradient, optionally with rounded corners and a border drawn
/// inside its bounds. A plain `Sendable` value, drawn on a render worker.
public struct RectContent: CairoDrawnContent, Hashable {
    public enum Fill: Hashable, Sendable {
        case solid(Color)
        /// A linear gradient from `top` at the first row to `bottom` at the last.
        case verticalGradient(top: Color, bottom: Color)
        /// `colors` evenly spaced along a line at `angle` degrees, measured clockwise on screen: 0 runs left to
        /// right, 90 top to bottom, 180 right to left. The line spans the rectangle's projection onto it (as CSS
        /// `linear-gradient` does), so the corners it starts and ends at get exactly the first and last colours.
        /// One colour fills solidly; none draws nothing.
        case linearGradient(colors: [Color], angle: Double)

        /// True when every pixel the fill covers ends up with alpha 1.
        public var isOpaque: Bool {
            switch self {
            case .solid(let color): color.alpha >= 1
            case .verticalGradient(let top, let bottom): top.alpha >= 1 && bottom.alpha >= 1
            case .linearGradient(let colors, _): !colors.isEmpty && colors.allSatisfy { $0.alpha >= 1 }
            }
        }

        /// The same fill with `transform` applied to every colour (pressed and disabled looks).
        public func mapColors(_ transform: (Color) -> Color) -> Fill {
            switch self {
            case .solid(let color): .solid(transform(color))
            case .verticalGradient(let top, let bottom): .verticalGradient(top: transform(top), bottom: transform(bottom))
            case .linearGradient(let colors, let angle): .linearGradient(colors: colors.map(transform), angle: angle)
            }
        }
    }

    public struct Border: Hashable, Sendable {
        /// In pixels, drawn inside the rectangle.
        public var width: Double
        public var color: Color
        public init(width: Double, color: Color) { self.width = width; self.color = color }
    }

    public var fill: Fill
    /// In pixels; clamped to half the shorter side.
    public var cornerRadius: Double
    public var border: Border?

    public init(fill: Fill, cornerRadius: Double = 0, border: Border? = nil) {
        self.fill = fill; self.cornerRadius = cornerRadius; self.border = border
    }

    public init(color: Color, cornerRadius: Double = 0, border: Border? = nil) {
        self.init(fill: .solid(color), cornerRadius: cornerRadius, border: border)
    }

    public var kind: String { "rect" }

    /// A solid fill with square corners and no border: the compositor fills its part of the damage, and its layer
    /// holds no surface (8 MB for a full-screen background at 1920x1080). Measured (`kioskd bench --scenario
    /// plain-fill`): filling is cheaper than copying from a surface, about half the time. A gradient is not: drawn
    /// at every composition it cost 24 to 40 times the copy from its surface (7 ms for the full screen at 1080p on
    /// the development host), so gradients keep their surface.
    public var compositesWithoutSurface: Bool {
        guard case .solid = fill, cornerRadius <= 0 else { return false }
        return border.map { $0.width <= 0 } ?? true
    }

    public var isOpaque: Bool {
        guard cornerRadius <= 0 else { return false }
        return fill.isOpaque && (border.map { $0.width <= 0 || $0.color.alpha >= 1 } ?? true)
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "rect content" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let box = Rect(size: size)
        addRoundedRectangle(cr, x: 0, y: 0, width: Double(box.width), height: Double(box.height), radius: cornerRadius)
        try fillPath(cr, with: fill, box: box, what: "rect content \(size)")
        if let border { strokeBorder(cr, border, box: box, cornerRadius: cornerRadius) }
    }
}

/// Fills (and clears) the current path on `cr` with `fill`, laid out over `box`. Throws naming `what` when Cairo
/// cannot make the gradient.
func fillPath(_ cr: OpaquePointer, with fill: RectContent.Fill, box: Rect, what: String) throws {
    let x = Double(box.x), y = Double(box.y), width = Double(box.width), height = Double(box.height)
    let stops: [Color]
    let line: (x0: Double, y0: Double, x1: Double, y1: Double)
    switch fill {
    case .solid(let color):
        setSource(cr, color)
        cairo_fill(cr)
        return
    case .verticalGradient(let top, let bottom):
        stops = [top, bottom]
        line = (x, y, x, y + height)
    case .linearGradient(let colors, let angle):
        guard colors.count > 1 else {
            if let only = colors.first { setSource(cr, only) } else { setSource(cr, .clear) }
            cairo_fill(cr)
            return
        }
        stops = colors
        let radians = (angle.isFinite ? angle : 0) * Double.pi / 180
        let dx = cos(radians), dy = sin(radians)
        // Half the length of the rectangle's projection onto the gradient's direction.
        let half = (width * abs(dx) + height * abs(dy)) / 2
        let cx = x + width / 2, cy = y + height / 2
        line = (cx - dx * half, cy - dy * half, cx + dx * half, cy + dy * half)
    }
    let gradient = cairo_pattern_create_linear(line.x0, line.y0, line.x1, line.y1)!
    defer { cairo_pattern_destroy(gradient) }  // cairo_set_source keeps its own reference
    let status = cairo_pattern_status(gradient)
    guard status == CAIRO_STATUS_SUCCESS else {
        cairo_new_path(cr)
        throw RenderError("\(what): gradient failed: \(cairoStatusString(status))")
    }
    for (index, color) in stops.enumerated() {
        cairo_pattern_add_color_stop_rgba(gradient, Double(index) / Double(stops.count - 1), color.red, color.green,
                                          color.blue, color.alpha)
    }
    // Beyond the line's ends (only reachable by rounding) the end colours continue.
    cairo_pattern_set_extend(gradient, CAIRO_EXTEND_PAD)
    cairo_set_source(cr, gradient)
    cairo_fill(cr)
}

/// Strokes `border` inside `box`, following corners of `cornerRadius`. Does nothing for a border of no width.
func strokeBorder(_ cr: OpaquePointer, _ border: RectContent.Border, box: Rect, cornerRadius: Double) {
    guard border.width > 0 else { return }
    // A stroke is centred on its path, so the path runs half a border inside the edge.
    let half = border.width / 2
    addRoundedRectangle(cr, x: Double(box.x) + half, y: Double(box.y) + half, width: Double(box.width) - border.width,
                        height: Double(box.height) - border.width, radius: max(cornerRadius - half, 0))
    cairo_set_line_width(cr, border.width)
    setSource(cr, border.color)
    cairo_stroke(cr)
}
