import CCairo
import KioskCore

/// Paints a finished layer render onto `cr` at `frame` (scaled when the sizes differ), with `opacity`, clipped to
/// `clip`. With `transform` (`CompositeItem.transform`: the unit square to user space) the render is painted
/// through it instead, bilinearly filtered, and `frame` only bounds it. The shadow compositor and the naive
/// renderer share this, so both put the same pixels on screen.
///
/// Runs on the thread that owns `cr`. The Cairo surface wrapping `layer`'s memory lives only inside this call, while
/// `layer` is kept alive, and is finished before it is destroyed: even if Cairo kept a reference somewhere it could
/// no longer reach the memory.
func paintLayerSurface(_ layer: LayerSurface, frame: Rect, opacity: Double, clip: Rect?, transform: AffineTransform? = nil,
                       on cr: OpaquePointer) {
    let visible = clip.map { frame.intersection($0) } ?? frame
    guard !visible.isEmpty, opacity > 0 else { return }
    if let transform, !isInvertible(transform) { return }
    withExtendedLifetime(layer) {
        guard let source = cairo_image_surface_create_for_data(
            layer.bytes.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_ARGB32,
            Int32(clamping: layer.size.width), Int32(clamping: layer.size.height), Int32(clamping: layer.stride))
        else { return }
        defer {
            cairo_surface_finish(source)
            cairo_surface_destroy(source)
        }
        guard cairo_surface_status(source) == CAIRO_STATUS_SUCCESS else {
            compositorLogger.error("layer surface \(layer.size): cannot wrap for painting: \(cairoStatusString(cairo_surface_status(source)))")
            return
        }
        if let transform {
            paintTransformed(source, size: layer.size, transform: transform, visible: visible, opacity: opacity, on: cr)
            return
        }
        let scaleX = Double(frame.width) / Double(layer.size.width)
        let scaleY = Double(frame.height) / Double(layer.size.height)
        let isExact = frame.width == layer.size.width && frame.height == layer.size.height

        cairo_save(cr)
        cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
        cairo_clip(cr)
        cairo_translate(cr, Double(frame.x), Double(frame.y))
        if !isExact { cairo_scale(cr, scaleX, scaleY) }
        cairo_set_source_surface(cr, source, 0, 0)
        let pattern = cairo_get_source(cr)
        if isExact {
            // Whole-pixel offsets at 1:1 sample exactly; NEAREST lets pixman take its plain blit paths.
            cairo_pattern_set_filter(pattern, CAIRO_FILTER_NEAREST)
        } else {
            // GOOD box-filters when shrinking (bilinear alone would alias) and interpolates when enlarging. PAD keeps
            // the frame's edge pixels from blending with the transparent outside of the source.
            cairo_pattern_set_filter(pattern, CAIRO_FILTER_GOOD)
            cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
        }
        if opacity >= 1 {
            // An opaque source replaces what is below, so SOURCE (a copy) gives the same pixels as OVER for less work.
            cairo_set_operator(cr, layer.isOpaque ? CAIRO_OPERATOR_SOURCE : CAIRO_OPERATOR_OVER)
            cairo_paint(cr)
        } else {
            cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
            cairo_paint_with_alpha(cr, opacity)
        }
        // Restoring drops the pattern, and with it the pattern's reference to `source`.
        cairo_restore(cr)
    }
}

/// Paints `source` (a layer render of `size`) through `transform` (the unit square to user space), inside
/// `visible`. The layer's own rotated rectangle is the clip, antialiased along its edges; inside it the source
/// pads rather than fading into its transparent outside, so edge pixels keep their colour.
private func paintTransformed(_ source: OpaquePointer, size: Size, transform: AffineTransform, visible: Rect, opacity: Double,
                              on cr: OpaquePointer) {
    cairo_save(cr)
    cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
    cairo_clip(cr)
    var matrix = cairoMatrix(transform)
    cairo_transform(cr, &matrix)
    cairo_scale(cr, 1 / Double(size.width), 1 / Double(size.height))
    cairo_rectangle(cr, 0, 0, Double(size.width), Double(size.height))
    cairo_clip(cr)
    cairo_set_source_surface(cr, source, 0, 0)
    let pattern = cairo_get_source(cr)
    cairo_pattern_set_filter(pattern, CAIRO_FILTER_BILINEAR)
    cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
    cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
    if opacity >= 1 { cairo_paint(cr) } else { cairo_paint_with_alpha(cr, opacity) }
    cairo_restore(cr)
}

/// A singular matrix would put the context into an error state; it also draws nothing, so it is skipped.
private func isInvertible(_ t: AffineTransform) -> Bool {
    abs(t.a * t.d - t.b * t.c) > 1e-12
}

func cairoMatrix(_ t: AffineTransform) -> cairo_matrix_t {
    var matrix = cairo_matrix_t()
    cairo_matrix_init(&matrix, t.a, t.b, t.c, t.d, t.tx, t.ty)
    return matrix
}

/// Fills `frame` ∩ `clip` with `color` at `opacity`, on the thread that owns `cr`. With `transform` (the unit
/// square to user space) it fills the transformed square instead, inside `frame` ∩ `clip`.
func paintColor(_ color: Color, frame: Rect, opacity: Double, clip: Rect?, transform: AffineTransform? = nil, on cr: OpaquePointer) {
    let visible = clip.map { frame.intersection($0) } ?? frame
    let alpha = color.alpha * min(max(opacity, 0), 1)
    guard !visible.isEmpty, alpha > 0 else { return }
    if let transform {
        guard isInvertible(transform) else { return }
        cairo_save(cr)
        cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
        cairo_clip(cr)
        var matrix = cairoMatrix(transform)
        cairo_transform(cr, &matrix)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
        cairo_set_source_rgba(cr, color.red, color.green, color.blue, alpha)
        cairo_rectangle(cr, 0, 0, 1, 1)
        cairo_fill(cr)
        cairo_restore(cr)
        return
    }
    cairo_save(cr)
    cairo_set_operator(cr, alpha >= 1 ? CAIRO_OPERATOR_SOURCE : CAIRO_OPERATOR_OVER)
    cairo_set_source_rgba(cr, color.red, color.green, color.blue, alpha)
    cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
    cairo_fill(cr)
    cairo_restore(cr)
}

/// Replaces everything inside the current clip with `color` (alpha ignored: the screen has none).
func paintBackground(_ color: Color, on cr: OpaquePointer) {
    cairo_save(cr)
    cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
    cairo_set_source_rgb(cr, color.red, color.green, color.blue)
    cairo_paint(cr)
    cairo_restore(cr)
}

/// Draws a plain fill (`CompositeItem.Source.content`) straight onto `cr` at `frame` with `opacity`, clipped to
/// `clip`: no surface of its own. Through `transform` (a rotated or mirrored layer), it is drawn into a surface the
/// size it has on screen and painted through the transform, as a render of the layer would be. A content that
/// fails to draw is logged and leaves the area as it was.
func paintContent(_ content: any LayerContent, frame: Rect, opacity: Double, clip: Rect?, transform: AffineTransform? = nil,
                  on cr: OpaquePointer) {
    let visible = clip.map { frame.intersection($0) } ?? frame
    guard !visible.isEmpty, opacity > 0 else { return }
    do {
        if let transform {
            let width = Int((transform.a * transform.a + transform.b * transform.b).squareRoot().rounded())
            let height = Int((transform.c * transform.c + transform.d * transform.d).squareRoot().rounded())
            guard width > 0, height > 0 else { return }
            let layer = LayerSurface(size: Size(width: width, height: height), isOpaque: content.isOpaque)
            try content.draw(into: layer, isCancelled: { false })
            paintLayerSurface(layer, frame: frame, opacity: opacity, clip: clip, transform: transform, on: cr)
            return
        }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
        cairo_clip(cr)
        try drawContent(content, at: frame, opacity: opacity, on: cr)
    } catch {
        compositorLogger.error("\(content.kind) \(frame): drawn by the compositor: \(error)")
    }
}
