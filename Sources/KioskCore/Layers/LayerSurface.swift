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

    /// Surfaces from this size up are mapped on their own (`mmap`) and unmapped when freed, so their memory goes
    /// back to the system at once. Through malloc, a freed large block raises glibc's mmap threshold and later ones
    /// come from heaps (one per render thread) that keep the memory: purged pages would not lower the RSS.
    static let mappedThreshold = 128 * 1024

    /// Whether `bytes` came from `mmap` (else from the Swift allocator).
    private let isMapped: Bool

    /// A zero-filled (fully transparent) surface. Sizes are clamped to at least 1x1 so a zero-sized layer still
    /// has valid memory.
    public init(size: Size, isOpaque: Bool = false) {
        let w = max(size.width, 1), h = max(size.height, 1)
        self.size = Size(width: w, height: h)
        self.stride = w * 4
        let count = w * 4 * h
        // Anonymous mappings are zero-filled by the kernel, page by page as they are first touched.
        if count >= Self.mappedThreshold,
           let mapped = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), mapped != MAP_FAILED {
            self.bytes = mapped
            isMapped = true
        } else {
            self.bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            self.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: count)
            isMapped = false
        }
        self.isOpaque = isOpaque
    }

    deinit {
        if isMapped { munmap(bytes, byteCount) } else { bytes.deallocate() }
    }

    public var byteCount: Int { stride * size.height }

    /// The premultiplied ARGB word at (x, y), for tests.
    public func pixel(x: Int, y: Int) -> UInt32 {
        bytes.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
    }
}
