import CCairo
import KioskCore

/// A filled rectangle: a solid colour or a vertical gradient, optionally with rounded corners and a border drawn
/// inside its bounds. A plain `Sendable` value, drawn on a render worker.
public struct RectContent: LayerContent, Hashable {
    public enum Fill: Hashable, Sendable {
        case solid(Color)
        /// A linear gradient from `top` at the first row to `bottom` at the last.
        case verticalGradient(top: Color, bottom: Color)
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

    public var isOpaque: Bool {
        guard cornerRadius <= 0 else { return false }
        let fillIsOpaque = switch fill {
        case .solid(let color): color.alpha >= 1
        case .verticalGradient(let top, let bottom): top.alpha >= 1 && bottom.alpha >= 1
        }
        return fillIsOpaque && (border.map { $0.width <= 0 || $0.color.alpha >= 1 } ?? true)
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        let width = Double(surface.size.width), height = Double(surface.size.height)
        try LayerCanvas.draw(into: surface, what: "rect content") { cr in
            addRoundedRectangle(cr, x: 0, y: 0, width: width, height: height, radius: cornerRadius)
            switch fill {
            case .solid(let color):
                setSource(cr, color)
                cairo_fill(cr)
            case .verticalGradient(let top, let bottom):
                let gradient = cairo_pattern_create_linear(0, 0, 0, height)!
                defer { cairo_pattern_destroy(gradient) }  // cairo_set_source keeps its own reference
                let status = cairo_pattern_status(gradient)
                guard status == CAIRO_STATUS_SUCCESS else {
                    throw RenderError("rect content \(surface.size): gradient failed: \(cairoStatusString(status))")
                }
                cairo_pattern_add_color_stop_rgba(gradient, 0, top.red, top.green, top.blue, top.alpha)
                cairo_pattern_add_color_stop_rgba(gradient, 1, bottom.red, bottom.green, bottom.blue, bottom.alpha)
                cairo_set_source(cr, gradient)
                cairo_fill(cr)
            }
            if let border, border.width > 0 {
                // A stroke is centred on its path, so the path runs half a border inside the edge.
                let half = border.width / 2
                addRoundedRectangle(cr, x: half, y: half, width: width - border.width, height: height - border.width,
                                    radius: max(cornerRadius - half, 0))
                cairo_set_line_width(cr, border.width)
                setSource(cr, border.color)
                cairo_stroke(cr)
            }
        }
    }
}
