import CCairo
import KioskCore

/// Scoped Cairo drawing into a `LayerSurface`'s memory (CAIRO_FORMAT_ARGB32, premultiplied). Used inside one
/// `LayerContent.draw` call on the render worker that owns the surface.
enum LayerCanvas {
    /// Runs `body` with a context drawing into `layer`. The Cairo surface and context exist only for this call and
    /// are finished and destroyed before it returns, while `layer` is kept alive. Throws, naming `what` and the
    /// size, if the surface cannot be wrapped or drawing left Cairo in an error state.
    static func draw<R>(into layer: LayerSurface, what: String, _ body: (OpaquePointer) throws -> R) throws -> R {
        try withExtendedLifetime(layer) {
            let size = layer.size
            guard size.width <= Int(Int32.max), size.height <= Int(Int32.max), layer.stride <= Int(Int32.max) else {
                throw RenderError("\(what) \(size): layer surface too large for Cairo")
            }
            let surface = cairo_image_surface_create_for_data(
                layer.bytes.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_ARGB32,
                Int32(size.width), Int32(size.height), Int32(layer.stride))!
            defer {
                cairo_surface_finish(surface)
                cairo_surface_destroy(surface)
            }
            let surfaceStatus = cairo_surface_status(surface)
            guard surfaceStatus == CAIRO_STATUS_SUCCESS else {
                throw RenderError("\(what) \(size): cannot wrap layer surface: \(cairoStatusString(surfaceStatus))")
            }
            let cr = cairo_create(surface)!
            defer { cairo_destroy(cr) }
            let contextStatus = cairo_status(cr)
            guard contextStatus == CAIRO_STATUS_SUCCESS else {
                throw RenderError("\(what) \(size): cairo_create failed: \(cairoStatusString(contextStatus))")
            }
            let result = try body(cr)
            let status = cairo_status(cr)
            guard status == CAIRO_STATUS_SUCCESS else {
                throw RenderError("\(what) \(size): drawing failed: \(cairoStatusString(status))")
            }
            cairo_surface_flush(surface)
            return result
        }
    }
}

/// Appends a rectangle with circular corners of `radius` (clamped to half the shorter side) to the current path.
func addRoundedRectangle(_ cr: OpaquePointer, x: Double, y: Double, width: Double, height: Double, radius: Double) {
    let r = min(max(radius, 0), width / 2, height / 2)
    guard r > 0 else {
        cairo_rectangle(cr, x, y, width, height)
        return
    }
    cairo_new_sub_path(cr)
    cairo_arc(cr, x + width - r, y + r, r, -Double.pi / 2, 0)
    cairo_arc(cr, x + width - r, y + height - r, r, 0, Double.pi / 2)
    cairo_arc(cr, x + r, y + height - r, r, Double.pi / 2, Double.pi)
    cairo_arc(cr, x + r, y + r, r, Double.pi, 3 * Double.pi / 2)
    cairo_close_path(cr)
}

func setSource(_ cr: OpaquePointer, _ color: Color) {
    cairo_set_source_rgba(cr, color.red, color.green, color.blue, color.alpha)
}

/// `value` with one decimal ("16.7"), without Foundation's formatters; negative values and NaN show as 0.0.
func oneDecimal(_ value: Double) -> String {
    guard value.isFinite, value > 0 else { return "0.0" }
    let tenths = Int((min(value, 1e12) * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
