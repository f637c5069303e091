import CCairo
import KioskCore

/// A widget's box: an optional fill, rounded corners and a border, with an optional inner content drawn inside it.
/// The inner content is rendered at the padded size into a surface of its own (so it lays itself out exactly as it
/// would in a layer of that size), then painted inset by `padding` and clipped to the box's rounded inside edge; the
/// border is drawn last, over it. A plain `Sendable` value (the inner content is one too), drawn on a render worker.
public struct BoxContent: CairoDrawnContent {
    /// Space between the box's edge and the inner content, in whole pixels so the content stays pixel-aligned.
    public struct Insets: Hashable, Sendable, ExpressibleByIntegerLiteral {
        public var top: Int
        public var left: Int
        public var bottom: Int
        public var right: Int

        public init(top: Int, left: Int, bottom: Int, right: Int) {
            self.top = top; self.left = left; self.bottom = bottom; self.right = right
        }

        /// The same inset on every side.
        public init(_ all: Int) { self.init(top: all, left: all, bottom: all, right: all) }
        public init(integerLiteral value: Int) { self.init(value) }

        public static let zero = Insets(0)
    }

    /// Nil leaves the box clear (a border alone, or padding around the content).
    public var fill: RectContent.Fill?
    public var cornerRadius: Double
    public var border: RectContent.Border?
    public var padding: Insets
    public var content: (any LayerContent)?

    public init(fill: RectContent.Fill? = nil, cornerRadius: Double = 0, border: RectContent.Border? = nil,
                padding: Insets = .zero, content: (any LayerContent)? = nil) {
        self.fill = fill; self.cornerRadius = cornerRadius; self.border = border; self.padding = padding
        self.content = content
    }

    /// "box", or "box+text" and the like, so telemetry keeps boxed content apart from bare content of its kind.
    public var kind: String { content.map { "box+\($0.kind)" } ?? "box" }

    /// Opaque exactly when the box alone is: square corners, an opaque fill and an opaque border (or none). Content
    /// drawn over an opaque box leaves it opaque.
    public var isOpaque: Bool {
        guard let fill else { return false }
        return RectContent(fill: fill, cornerRadius: cornerRadius, border: border).isOpaque
    }

    /// The rectangle the inner content is drawn into in a box of `size` (empty when the padding leaves no room).
    public func contentRect(in size: Size) -> Rect {
        Rect(x: padding.left, y: padding.top, width: size.width - padding.left - padding.right,
             height: size.height - padding.top - padding.bottom)
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        let box = Rect(size: surface.size)
        let inner = contentRect(in: surface.size)
        // The inner content draws first, into its own surface, so a failure there leaves this layer untouched.
        var innerSurface: LayerSurface?
        if let content, !inner.isEmpty {
            let rendered = LayerSurface(size: Size(width: inner.width, height: inner.height),
                                        isOpaque: content.isOpaque)
            try content.draw(into: rendered, isCancelled: isCancelled)
            innerSurface = rendered
        }
        guard !isCancelled() else { return }
        try LayerCanvas.draw(into: surface, what: "box content (\(kind))") { cr in
            try drawBox(cr, box: box, fill: fill, cornerRadius: cornerRadius, border: nil, what: "box content")
            if let innerSurface {
                try paint(innerSurface, at: inner, clippedTo: box, on: cr)
            }
            if let border { strokeBorder(cr, border, box: box, cornerRadius: cornerRadius) }
        }
    }

    package var drawDescription: String { "box content (\(kind))" }

    /// The direct path: the box, then the inner content drawn straight at its rectangle inside the border's
    /// outline, then the border. (The layer-surface path above draws the inner content first into its own surface.)
    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let box = Rect(size: size)
        let inner = contentRect(in: size)
        try drawBox(cr, box: box, fill: fill, cornerRadius: cornerRadius, border: nil, what: "box content")
        if let content, !inner.isEmpty {
            cairo_save(cr)
            clipInsideBorder(box, on: cr)
            var failure: (any Error)?
            do { try drawContent(content, at: inner, opacity: 1, on: cr) } catch { failure = error }
            cairo_restore(cr)
            if let failure { throw failure }
        }
        if let border { strokeBorder(cr, border, box: box, cornerRadius: cornerRadius) }
    }

    /// Clips `cr` to the inside of the border of the rounded box.
    private func clipInsideBorder(_ box: Rect, on cr: OpaquePointer) {
        let inset = border.map { max($0.width, 0) } ?? 0
        addRoundedRectangle(cr, x: Double(box.x) + inset, y: Double(box.y) + inset,
                            width: Double(box.width) - 2 * inset, height: Double(box.height) - 2 * inset,
                            radius: max(cornerRadius - inset, 0))
        cairo_clip(cr)
    }

    /// Paints `layer` with its top-left corner at `rect`'s, clipped to the inside of the border of the rounded box.
    private func paint(_ layer: LayerSurface, at rect: Rect, clippedTo box: Rect, on cr: OpaquePointer) throws {
        try withExtendedLifetime(layer) {
            let source = cairo_image_surface_create_for_data(
                layer.bytes.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_ARGB32, Int32(layer.size.width),
                Int32(layer.size.height), Int32(layer.stride))!
            defer {
                cairo_surface_finish(source)
                cairo_surface_destroy(source)
            }
            let status = cairo_surface_status(source)
            guard status == CAIRO_STATUS_SUCCESS else {
                throw RenderError("box content (\(kind)): cannot wrap inner surface \(layer.size): "
                    + cairoStatusString(status))
            }
            cairo_save(cr)
            clipInsideBorder(box, on: cr)
            cairo_set_source_surface(cr, source, Double(rect.x), Double(rect.y))
            cairo_paint(cr)
            cairo_restore(cr)
        }
    }
}

/// Fills the rounded `box` with `fill` (when given) and strokes `border` (when given) on `cr`.
func drawBox(_ cr: OpaquePointer, box: Rect, fill: RectContent.Fill?, cornerRadius: Double,
             border: RectContent.Border?, what: String) throws {
    if let fill {
        addRoundedRectangle(cr, x: Double(box.x), y: Double(box.y), width: Double(box.width),
                            height: Double(box.height), radius: cornerRadius)
        try fillPath(cr, with: fill, box: box, what: "\(what) \(box)")
    }
    if let border { strokeBorder(cr, border, box: box, cornerRadius: cornerRadius) }
}
