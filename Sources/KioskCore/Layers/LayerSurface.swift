#if canImport(Glibc)
import Glibc
#endif

/// The pixels of one finished layer render: premultiplied ARGB32 in native byte order (Cairo's
/// CAIRO_FORMAT_ARGB32), `stride` bytes per row, memory owned by this object and freed in `deinit`.
///
/// Written only by the render worker that renders into it, before the render is published; from then on it is
/// immutable and read by the compositor on the main thread. That hand-over (publish after the last write, through
/// the worker completion queue and eventfd) is why the type is `@unchecked Sendable`.
public final class LayerSurface: @unchecked Sendable {
    public let size: Size
    public let stride: Int
    public let bytes: UnsafeMutableRawPointer
    /// Every pixel has alpha 1: the compositor may copy instead of blend.
    public var isOpaque: Bool

    /// A zero-filled (fully transparent) surface. Sizes are clamped to at least 1x1 so a zero-sized layer still
    /// has valid memory.
    public init(size: Size, isOpaque: Bool = false) {
        let w = max(size.width, 1), h = max(size.height, 1)
        self.size = Size(width: w, height: h)
        self.stride = w * 4
        self.bytes = UnsafeMutableRawPointer.allocate(byteCount: w * 4 * h, alignment: 16)
        self.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: w * 4 * h)
        self.isOpaque = isOpaque
    }

    deinit { bytes.deallocate() }

    public var byteCount: Int { stride * size.height }

    /// The premultiplied ARGB word at (x, y), for tests.
    public func pixel(x: Int, y: Int) -> UInt32 {
        bytes.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
    }
}
