import CCairo
import KioskCore

/// Writes XRGB8888 pixels (rows of `stride` bytes) to a PNG file without alpha, through Cairo's PNG writer, whole
/// or not at all (`AtomicFile`, mode 0640; `file` is the seam a test fails a write through). Throws, naming `path`,
/// if the bytes do not cover the image or the file cannot be written.
public func writePNG(xrgb8888 bytes: UnsafeRawBufferPointer, size: Size, stride: Int, to path: String,
                     file: AtomicFile = AtomicFile()) throws {
    guard size.width > 0, size.height > 0, size.width <= Int(Int32.max), size.height <= Int(Int32.max),
          stride >= size.width * 4, stride <= Int(Int32.max) else {
        throw RenderError("png \(path): invalid image \(size) with stride \(stride)")
    }
    let needed = stride * (size.height - 1) + size.width * 4
    guard let base = bytes.baseAddress, bytes.count >= needed else {
        throw RenderError("png \(path): \(bytes.count) bytes given, \(size) with stride \(stride) needs \(needed)")
    }
    // Cairo wants a mutable pointer for any image surface, but writing a PNG only reads the pixels.
    let data = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
    let surface = cairo_image_surface_create_for_data(
        data, CAIRO_FORMAT_RGB24, Int32(size.width), Int32(size.height), Int32(stride))!
    defer { cairo_surface_destroy(surface) }
    let status = cairo_surface_status(surface)
    guard status == CAIRO_STATUS_SUCCESS else {
        throw RenderError("png \(path): cannot wrap \(size) stride \(stride) pixels: \(cairoStatusString(status))")
    }
    try writeSurfacePNG(surface, to: path, file: file)
}

/// As the pointer form, for pixels held in an array.
public func writePNG(xrgb8888 bytes: [UInt8], size: Size, stride: Int, to path: String, file: AtomicFile = AtomicFile()) throws {
    try bytes.withUnsafeBytes { try writePNG(xrgb8888: $0, size: size, stride: stride, to: path, file: file) }
}

/// Reads a PNG file as XRGB8888 rows of `width * 4` bytes. Images with alpha are composited over black, the way
/// an opaque scan-out buffer would show them.
public func readPNG(path: String) throws -> (pixels: [UInt8], size: Size, stride: Int) {
    let source = cairo_image_surface_create_from_png(path)!
    defer { cairo_surface_destroy(source) }
    let status = cairo_surface_status(source)
    guard status == CAIRO_STATUS_SUCCESS else {
        throw RenderError("png \(path): read failed: \(cairoStatusString(status))")
    }
    let size = Size(width: Int(cairo_image_surface_get_width(source)),
                    height: Int(cairo_image_surface_get_height(source)))
    // Painting onto a fresh RGB24 surface converts whatever format the PNG decoded to (ARGB32 premultiplied, A8,
    // ...) and is an exact copy when it already is RGB24.
    let canvas: CairoCanvas
    do {
        canvas = try CairoCanvas(size: size)
    } catch {
        throw RenderError("png \(path): \(error)")
    }
    cairo_set_source_surface(canvas.cairoContext, source, 0, 0)
    cairo_paint(canvas.cairoContext)
    try canvas.checkStatus()

    let rowBytes = size.width * 4
    return try canvas.withPixels { pixels in
        var out = [UInt8](repeating: 0, count: rowBytes * size.height)
        out.withUnsafeMutableBytes { dst in
            for y in 0..<size.height {
                let row = UnsafeRawBufferPointer(rebasing: pixels[(y * canvas.stride)..<(y * canvas.stride + rowBytes)])
                UnsafeMutableRawBufferPointer(rebasing: dst[(y * rowBytes)..<((y + 1) * rowBytes)]).copyMemory(from: row)
            }
        }
        return (out, size, rowBytes)
    }
}

/// Encodes `surface` in memory and writes the file whole (`AtomicFile`, readable by the group): a full disk leaves
/// no truncated PNG under `path`.
func writeSurfacePNG(_ surface: OpaquePointer, to path: String, file: AtomicFile = AtomicFile()) throws {
    let png = try encodeSurfacePNG(surface, what: "png \(path)")
    do { try file.write(png, to: path) } catch { throw RenderError("png \(error)") }
}
