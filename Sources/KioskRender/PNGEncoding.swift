import CCairo
import KioskCore

/// Encodes XRGB8888 pixels (rows of `stride` bytes) as a PNG without alpha, in memory, through Cairo's PNG
/// writer: for a screenshot sent over the control socket or written to a file (`AtomicFile`). Any thread; the
/// pixels are only read.
public func encodePNG(xrgb8888 bytes: [UInt8], size: Size, stride: Int) throws -> [UInt8] {
    guard size.width > 0, size.height > 0, size.width <= Int(Int32.max), size.height <= Int(Int32.max),
          stride >= size.width * 4, stride <= Int(Int32.max) else {
        throw RenderError("png encoding: invalid image \(size) with stride \(stride)")
    }
    let needed = stride * (size.height - 1) + size.width * 4
    guard bytes.count >= needed else {
        throw RenderError("png encoding: \(bytes.count) bytes given, \(size) with stride \(stride) needs \(needed)")
    }
    var pixels = bytes
    return try pixels.withUnsafeMutableBytes { raw in
        let surface = cairo_image_surface_create_for_data(
            raw.baseAddress!.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24,
            Int32(size.width), Int32(size.height), Int32(stride))!
        defer { cairo_surface_destroy(surface) }
        let created = cairo_surface_status(surface)
        guard created == CAIRO_STATUS_SUCCESS else { throw RenderError("png encoding \(size): \(cairoStatusString(created))") }
        return try encodeSurfacePNG(surface, what: "png encoding \(size)")
    }
}

/// The PNG of a Cairo image surface, in memory, through Cairo's PNG writer. `what` starts the error message.
func encodeSurfacePNG(_ surface: OpaquePointer, what: String) throws -> [UInt8] {
    final class Sink { var bytes: [UInt8] = [] }
    let sink = Sink()
    let status = withExtendedLifetime(sink) {
        cairo_surface_write_to_png_stream(surface, { closure, data, length in
            guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
            let sink = Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
            return CAIRO_STATUS_SUCCESS
        }, Unmanaged.passUnretained(sink).toOpaque())
    }
    guard status == CAIRO_STATUS_SUCCESS else { throw RenderError("\(what): \(cairoStatusString(status))") }
    return sink.bytes
}
