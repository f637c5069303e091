import CCairo
import KioskCore
import KioskRender

/// Not product code: the baseline `kioskd bench` measures the engine against, what a kiosk written by hand does.
/// Every frame it redraws every item, single-threaded, into one buffer: the background, then each item's content
/// drawn at its size and painted at its frame with its opacity, clipped to the item's frame and its clipping
/// ancestors (so a ticker's long strip costs only its visible part to paint). Contents draw only into a
/// `LayerSurface`, so each item's drawing goes through one temporary surface of the item's size.
///
/// A plain `Sendable` value; `render` runs on the calling thread and keeps nothing between calls.
public struct NaiveFrameRenderer: Sendable {
    /// Painted first, over the whole frame. Alpha is ignored: the screen has none.
    public var background: Color

    public init(background: Color = .black) {
        self.background = background
    }

    public func render(items: [SceneItem], into buffer: PixelBuffer) throws {
        try CairoCanvas.withCanvas(on: buffer) { canvas in
            let cr = canvas.cairoContext
            cairo_save(cr)
            cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
            cairo_set_source_rgb(cr, background.red, background.green, background.blue)
            cairo_paint(cr)
            cairo_restore(cr)
            for item in items {
                let visible = item.clip.map { item.frame.intersection($0) } ?? item.frame
                guard !visible.isEmpty else { continue }
                let layer = LayerSurface(size: item.frame.size, isOpaque: item.content.isOpaque)
                try item.content.draw(into: layer, isCancelled: { false })
                try paint(layer, item: item, visible: visible, on: cr)
            }
        }
    }

    private func paint(_ layer: LayerSurface, item: SceneItem, visible: Rect, on cr: OpaquePointer) throws {
        try withExtendedLifetime(layer) {
            let source = cairo_image_surface_create_for_data(
                layer.bytes.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_ARGB32,
                Int32(clamping: layer.size.width), Int32(clamping: layer.size.height), Int32(clamping: layer.stride))!
            defer {
                cairo_surface_finish(source)
                cairo_surface_destroy(source)
            }
            guard cairo_surface_status(source) == CAIRO_STATUS_SUCCESS else {
                throw RenderError("naive renderer: item \(item.frame) (\(item.content.kind)): cannot wrap its surface")
            }
            cairo_save(cr)
            cairo_rectangle(cr, Double(visible.x), Double(visible.y), Double(visible.width), Double(visible.height))
            cairo_clip(cr)
            cairo_set_source_surface(cr, source, Double(item.frame.x), Double(item.frame.y))
            cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST)
            if item.opacity >= 1 {
                cairo_set_operator(cr, layer.isOpaque ? CAIRO_OPERATOR_SOURCE : CAIRO_OPERATOR_OVER)
                cairo_paint(cr)
            } else {
                cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
                cairo_paint_with_alpha(cr, item.opacity)
            }
            cairo_restore(cr)
        }
    }
}
