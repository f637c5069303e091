#if canImport(Glibc)
import Glibc
#endif
import CCairo
import KioskCore

/// A PNG file drawn into the layer with a fit mode. Decoding happens in `draw`, on the render worker; results are
/// kept in a small process-wide cache of fitted images. A plain `Sendable` value.
public struct ImageContent: LayerContent, Hashable {
    /// How the image maps onto the layer, as CSS `object-fit` does. Every mode centres the image.
    public enum Fit: String, Hashable, Sendable, CaseIterable {
        /// Scaled to fit inside, keeping its aspect ratio (may leave transparent bands).
        case contain
        /// Scaled to cover the whole layer, keeping its aspect ratio (may crop).
        case cover
        /// Stretched to the layer's size.
        case fill
        /// At its own size.
        case none
    }

    /// What the decoded-image cache holds and how often it helped. A plain value.
    public struct CacheStatistics: Hashable, Sendable {
        public var entries: Int
        public var bytes: Int
        public var hits: Int
        public var misses: Int
    }

    public var path: String
    public var fit: Fit

    public init(path: String, fit: Fit = .contain) {
        self.path = path; self.fit = fit
    }

    public var kind: String { "image" }

    public static var cacheStatistics: CacheStatistics { DecodedImageCache.shared.statistics }

    /// Drops every cached image (memory pressure, or tests).
    public static func purgeCache() { DecodedImageCache.shared.removeAll() }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw RenderError("image \(path): \(errnoDescription(errno))")
        }
        let key = DecodedImageCache.Key(
            path: path, fileSize: Int(info.st_size), modifiedSeconds: Int(info.st_mtim.tv_sec),
            modifiedNanoseconds: Int(info.st_mtim.tv_nsec), layerSize: surface.size, fit: fit)
        let cache = DecodedImageCache.shared
        if let pixels = cache.pixels(for: key), pixels.count == surface.byteCount {
            pixels.withUnsafeBytes { surface.bytes.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return
        }

        let image = try DecodedPNG(path: path)
        guard !isCancelled() else { return }
        try LayerCanvas.draw(into: surface, what: "image \(path)") { cr in
            let width = Double(image.size.width), height = Double(image.size.height)
            let layerWidth = Double(surface.size.width), layerHeight = Double(surface.size.height)
            let (scaleX, scaleY): (Double, Double) = switch fit {
            case .contain: (min(layerWidth / width, layerHeight / height), min(layerWidth / width, layerHeight / height))
            case .cover: (max(layerWidth / width, layerHeight / height), max(layerWidth / width, layerHeight / height))
            case .fill: (layerWidth / width, layerHeight / height)
            case .none: (1, 1)
            }
            cairo_translate(cr, (layerWidth - width * scaleX) / 2, (layerHeight - height * scaleY) / 2)
            cairo_scale(cr, scaleX, scaleY)
            cairo_set_source_surface(cr, image.handle, 0, 0)
            let isExact = scaleX == 1 && scaleY == 1
            cairo_pattern_set_filter(cairo_get_source(cr), isExact ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD)
            cairo_rectangle(cr, 0, 0, width, height)
            cairo_fill(cr)
        }
        cache.insert(Array(UnsafeRawBufferPointer(start: surface.bytes, count: surface.byteCount)), for: key)
    }
}

/// The single owner of a Cairo image surface decoded from a PNG file. Lives inside one draw call on the render
/// worker.
struct DecodedPNG: ~Copyable {
    let handle: OpaquePointer
    let size: Size

    init(path: String) throws {
        let surface = cairo_image_surface_create_from_png(path)!
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            throw RenderError("image \(path): cannot decode PNG: \(cairoStatusString(status))")
        }
        let size = Size(width: Int(cairo_image_surface_get_width(surface)),
                        height: Int(cairo_image_surface_get_height(surface)))
        guard size.width > 0, size.height > 0 else {
            cairo_surface_destroy(surface)
            throw RenderError("image \(path): PNG has no pixels (\(size))")
        }
        handle = surface
        self.size = size
    }

    deinit { cairo_surface_destroy(handle) }
}
