import CCairo
import KioskCore

/// A content whose drawing is plain Cairo on a context, so it can be drawn two ways with the same code: into its
/// layer's own zero-filled surface (`LayerContent.draw(into:)`, what the engine's render workers do), or straight
/// onto another context at an offset with a clip (`CairoCanvas.draw(_:at:clip:opacity:)`). Every content kind of
/// this module is one. Drawing runs on the calling thread, on a context that thread owns.
package protocol CairoDrawnContent: LayerContent {
    /// Draws on `cr`, whose origin is the content's top-left corner and whose clip lies inside a box of `size`.
    /// The context may already hold pixels (the direct path): drawing blends over them, as it would over the
    /// transparent pixels of a fresh layer surface.
    func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws

    /// Names the content in errors: `text content "Opening hours…"`.
    var drawDescription: String { get }

    /// True when the drawing replaces pixels instead of blending over them with a colour that is not opaque (a
    /// translucent progress fill drawn with Cairo's SOURCE operator): the direct path then draws through a group,
    /// so the pixels below are not replaced.
    var replacesPixelsBelow: Bool { get }
}

extension CairoDrawnContent {
    package var replacesPixelsBelow: Bool { false }

    /// The layer-surface path: the content drawn into `surface` (zero-filled) through a context made for the call.
    package func drawThroughLayerCanvas(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try LayerCanvas.draw(into: surface, what: drawDescription) { cr in
            try draw(on: cr, size: surface.size, isCancelled: isCancelled)
        }
    }
}

extension CairoCanvas {
    /// Draws `content` straight onto this canvas, its top-left corner at `frame`'s, clipped to `frame` and to
    /// `clip` (the clipping ancestors' frames, when any), with `opacity`: no surface of the content's own. A
    /// content of another module, which can only draw into a `LayerSurface`, goes through one temporary surface
    /// of its size. Throws naming the content if drawing failed or left Cairo in an error state.
    public func draw(_ content: any LayerContent, at frame: Rect, clip: Rect? = nil, opacity: Double = 1) throws {
        let visible = clip.map { frame.intersection($0) } ?? frame
        guard !visible.isEmpty, opacity > 0 else { return }
        let cr = cairoContext
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
        cairo_clip(cr)
        try drawContent(content, at: frame, opacity: opacity, on: cr)
    }

    /// Paints a finished layer surface at `frame` with `opacity`, clipped to `clip`, as the compositor paints it.
    public func paint(_ layer: LayerSurface, at frame: Rect, clip: Rect? = nil, opacity: Double = 1) {
        paintLayerSurface(layer, frame: frame, opacity: opacity, clip: clip, on: cairoContext)
    }
}

/// Draws `content` on `cr` (already clipped by the caller) with its top-left corner at `frame`'s, inside `frame`,
/// with `opacity`. The context's state is restored before returning.
func drawContent(_ content: any LayerContent, at frame: Rect, opacity: Double, on cr: OpaquePointer) throws {
    guard let drawn = content as? any CairoDrawnContent else {
        let layer = LayerSurface(size: frame.size, isOpaque: content.isOpaque)
        try content.draw(into: layer, isCancelled: { false })
        paintLayerSurface(layer, frame: frame, opacity: opacity, clip: nil, on: cr)
        return
    }
    cairo_save(cr)
    defer { cairo_restore(cr) }
    cairo_rectangle(cr, Double(frame.x), Double(frame.y), Double(frame.width), Double(frame.height))
    cairo_clip(cr)
    cairo_translate(cr, Double(frame.x), Double(frame.y))
    cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
    let grouped = opacity < 1 || drawn.replacesPixelsBelow
    if grouped { cairo_push_group(cr) }
    var failure: (any Error)?
    do { try drawn.draw(on: cr, size: frame.size, isCancelled: { false }) } catch { failure = error }
    if grouped {
        // Popped even after a failure, or the restore would not match the save.
        cairo_pop_group_to_source(cr)
        if failure == nil { cairo_paint_with_alpha(cr, min(opacity, 1)) }
    }
    if let failure { throw failure }
    let status = cairo_status(cr)
    guard status == CAIRO_STATUS_SUCCESS else {
        throw RenderError("\(drawn.drawDescription) \(frame): direct drawing failed: \(cairoStatusString(status))")
    }
}
