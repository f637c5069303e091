import CCairo
import KioskCore

// DRM's XRGB8888 is a little-endian 32-bit word; Cairo's RGB24 is a native-endian one. They are the same bytes
// only on little-endian hosts, which is every board kioskd targets.
#if !_endian(little)
#error("KioskRender assumes a little-endian host: CAIRO_FORMAT_RGB24 must match DRM_FORMAT_XRGB8888")
#endif

/// The single owner of a Cairo image surface (CAIRO_FORMAT_RGB24, i.e. XRGB8888) and the context drawing into it.
///
/// Lives on the thread that created it (a render worker, or a test): a Cairo context is not thread-safe, so the
/// type is deliberately not `Sendable`; results cross threads as copied bytes.
///
/// Two kinds of memory:
/// - borrowed (`withCanvas(on:)`): the surface draws into memory someone else owns, such as a backend's
///   `PixelBuffer`. The canvas exists only for the closure; afterwards the surface is flushed and finished, so even
///   a canvas reference that escapes the closure can no longer touch the memory (Cairo ignores drawing on a
///   finished surface and records an error instead).
/// - owned (`init(size:)`): Cairo allocates the pixels and frees them with the surface, for offscreen renders.
public final class CairoCanvas {
    public let size: Size
    /// Bytes per row.
    public let stride: Int
    /// The context drawing into `surface`. Valid for the canvas's lifetime; never destroy it or keep it beyond.
    package let cairoContext: OpaquePointer
    private let surface: OpaquePointer
    /// Set once a borrowed surface is detached from its memory; from then on the pixels are not ours to read.
    private var isFinished = false

    /// Borrows `base`; the caller guarantees `stride * size.height` bytes stay valid until `finish()`.
    private convenience init(borrowing base: UnsafeMutableRawPointer, size: Size, stride: Int) throws {
        try Self.validate(size: size, stride: stride)
        let surface = cairo_image_surface_create_for_data(
            base.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24,
            Int32(size.width), Int32(size.height), Int32(stride))!
        try self.init(adopting: surface, size: size, what: "cairo_image_surface_create_for_data (stride \(stride))")
    }

    /// An offscreen canvas whose pixels Cairo allocates (zero-filled, i.e. black) and frees with the surface.
    public convenience init(size: Size) throws {
        try Self.validate(size: size, stride: nil)
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(size.width), Int32(size.height))!
        try self.init(adopting: surface, size: size, what: "cairo_image_surface_create")
    }

    /// Takes over `surface` (one reference) and creates the context; on any failure destroys both before throwing.
    private init(adopting surface: OpaquePointer, size: Size, what: String) throws {
        // Cairo never returns NULL: a failed create returns an error object whose status says why, and which must
        // still be destroyed (destroying Cairo's static nil objects is a no-op).
        let surfaceStatus = cairo_surface_status(surface)
        guard surfaceStatus == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw RenderError("canvas \(size): \(what) failed: \(cairoStatusString(surfaceStatus))")
        }
        let context = cairo_create(surface)!
        let contextStatus = cairo_status(context)
        guard contextStatus == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(context)
            cairo_surface_destroy(surface)
            throw RenderError("canvas \(size): cairo_create failed: \(cairoStatusString(contextStatus))")
        }
        self.surface = surface
        self.cairoContext = context
        self.size = size
        self.stride = Int(cairo_image_surface_get_stride(surface))
    }

    deinit {
        cairo_destroy(cairoContext)
        cairo_surface_destroy(surface)
    }

    /// Runs `body` with a canvas drawing into `buffer`'s memory, then flushes and finishes the surface so nothing
    /// can draw into the buffer once this returns. Throws if the canvas cannot be created or drawing left Cairo in
    /// an error state.
    public static func withCanvas<R>(on buffer: PixelBuffer, _ body: (CairoCanvas) throws -> R) throws -> R {
        try withCanvas(base: buffer.base, size: buffer.size, stride: buffer.stride, body)
    }

    /// As `withCanvas(on:)`, for any XRGB8888 memory of at least `stride * size.height` bytes.
    public static func withCanvas<R>(
        base: UnsafeMutableRawPointer, size: Size, stride: Int, _ body: (CairoCanvas) throws -> R
    ) throws -> R {
        let canvas = try CairoCanvas(borrowing: base, size: size, stride: stride)
        // Finish even when `body` throws: the memory is only borrowed for this call.
        var finished = false
        defer { if !finished { canvas.finish() } }
        let result = try body(canvas)
        try canvas.checkStatus()
        canvas.finish()
        finished = true
        return result
    }

    /// Throws if a drawing call failed: Cairo records errors on the context and ignores later calls.
    public func checkStatus() throws {
        let status = cairo_status(cairoContext)
        guard status == CAIRO_STATUS_SUCCESS else {
            throw RenderError("canvas \(size): drawing failed: \(cairoStatusString(status))")
        }
    }

    /// Writes pending drawing to memory and detaches the surface from it for good.
    private func finish() {
        cairo_surface_flush(surface)
        cairo_surface_finish(surface)
        isFinished = true
    }

    /// Fills the whole canvas with `color`.
    public func fill(_ color: Color) {
        fill(Rect(size: size), color: color)
    }

    /// Fills `rect` with `color`, blended over what was there when the colour is translucent.
    public func fill(_ rect: Rect, color: Color) {
        cairo_save(cairoContext)
        cairo_set_source_rgba(cairoContext, color.red, color.green, color.blue, color.alpha)
        cairo_rectangle(cairoContext, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
        cairo_fill(cairoContext)
        cairo_restore(cairoContext)
    }

    /// The pixels as XRGB8888 rows of `stride` bytes, after writing out pending drawing. Only for owned canvases
    /// and inside `withCanvas`; the pointer is valid during `body` only.
    public func withPixels<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard !isFinished else { throw RenderError("canvas \(size): pixels read after its withCanvas scope ended") }
        cairo_surface_flush(surface)
        guard let data = cairo_image_surface_get_data(surface) else {
            throw RenderError("canvas \(size): pixels unavailable: \(cairoStatusString(cairo_surface_status(surface)))")
        }
        return try body(UnsafeRawBufferPointer(start: data, count: stride * size.height))
    }

    /// Writes the canvas as a PNG file (RGB, no alpha).
    public func writePNG(to path: String) throws {
        guard !isFinished else { throw RenderError("png \(path): canvas \(size) written after its withCanvas scope ended") }
        cairo_surface_flush(surface)
        try writeSurfacePNG(surface, to: path)
    }

    private static func validate(size: Size, stride: Int?) throws {
        // Cairo accepts 0x0 surfaces and negative strides (bottom-up rows); neither makes sense for a scan-out
        // buffer, so they are refused here. Cairo itself checks the stride's alignment and minimum.
        guard size.width > 0, size.height > 0, size.width <= Int(Int32.max), size.height <= Int(Int32.max) else {
            throw RenderError("canvas \(size): invalid size")
        }
        if let stride {
            guard stride > 0, stride <= Int(Int32.max) else {
                throw RenderError("canvas \(size): invalid stride \(stride)")
            }
        }
    }
}

@available(*, unavailable, message: "a Cairo context belongs to one thread")
extension CairoCanvas: Sendable {}

/// Cairo's description of `status`, e.g. "invalid value for stride".
func cairoStatusString(_ status: cairo_status_t) -> String {
    String(cString: cairo_status_to_string(status))
}
