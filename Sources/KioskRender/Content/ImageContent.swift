#if canImport(Glibc)
import Glibc
#endif
import CCairo
import CKioskJpeg
import CKioskPng
import CKioskSvg
import KioskCore

/// A PNG, JPEG or SVG file drawn into the layer with a fit mode. The format is read from the file's first bytes,
/// not its name. PNG and JPEG are decoded to pixels and scaled; SVG is rendered as vectors at the size it is shown,
/// so it stays sharp at any layer size. A PNG is decoded row by row, only the part the fit shows and scaled down
/// while decoding (`ImageDecodePlan`); a JPEG with libjpeg's DCT scaling: an image costs what it shows, not what
/// its file holds. A file whose header declares more than `maxPixels` pixels is refused before it is decoded. Decoding happens in `draw`, on the render worker; results are kept in a small
/// process-wide cache of fitted images keyed by path, file identity, layer size and fit. A plain `Sendable` value.
public struct ImageContent: CairoDrawnContent, Hashable {
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
    /// `memory.max_image_pixels`: a PNG or JPEG declaring more pixels fails to render (the widget keeps its
    /// placeholder) without being decoded.
    public var maxPixels: Int

    public init(path: String, fit: Fit = .contain, maxPixels: Int = ImagePixelLimit.defaultMaximum) {
        self.path = path; self.fit = fit; self.maxPixels = maxPixels
    }

    public var kind: String { "image" }

    public static var cacheStatistics: CacheStatistics { DecodedImageCache.shared.statistics }

    /// The decoded-image cache, for an engine's surface budget (`LayerEngine.sharedSurfaceCaches`).
    public static var sharedSurfaceCache: any SharedSurfaceCache { DecodedImageCache.shared }

    /// Drops every cached image (memory pressure, or tests).
    public static func purgeCache() { DecodedImageCache.shared.removeAll() }

    /// Draws the image into `surface`: a copy of the cached one when there is one, else decoded (and a copy
    /// cached, since `surface` is the caller's to write).
    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try draw(into: surface, file: try openFile(), isCancelled: isCancelled)
    }

    private func draw(into surface: LayerSurface, file: RegularFile, isCancelled: () -> Bool) throws {
        let declared = try checkedHeader(file)
        let key = cacheKey(file, layerSize: surface.size)
        let cache = DecodedImageCache.shared
        if let cached = cache.surface(for: key), cached.byteCount == surface.byteCount, cached.stride == surface.stride {
            surface.bytes.copyMemory(from: cached.bytes, byteCount: cached.byteCount)
            return
        }
        try decode(file, into: surface, declared: declared, isCancelled: isCancelled)
        guard !isCancelled(), cache.admits(bytes: surface.byteCount) else { return }
        let copy = LayerSurface(size: surface.size, isOpaque: surface.isOpaque)
        guard copy.byteCount == surface.byteCount else { return }
        copy.bytes.copyMemory(from: surface.bytes, byteCount: surface.byteCount)
        cache.insert(copy, for: key)
    }

    /// The engine's path: the cached surface itself, shared by every layer showing this file at this size and fit,
    /// or a new one decoded and cached. Nothing writes it once it is returned.
    public func sharedSurface(size: Size, isCancelled: () -> Bool) throws -> LayerSurface? {
        let file = try openFile()
        let declared = try checkedHeader(file)
        let key = cacheKey(file, layerSize: size)
        let cache = DecodedImageCache.shared
        if let cached = cache.surface(for: key) { return cached }
        let surface = LayerSurface(size: size, isOpaque: isOpaque)
        try decode(file, into: surface, declared: declared, isCancelled: isCancelled)
        if !isCancelled() { cache.insert(surface, for: key) }
        return surface
    }

    /// The file's header, refused beyond the pixel limit. The limit is checked before the cache, so a lowered
    /// limit also refuses an image decoded before under a higher one. A header that cannot be read is left to the
    /// decoder, which says what is wrong in its own words.
    private func checkedHeader(_ file: RegularFile) throws -> Result<ImageHeader?, ImageHeaderError> {
        let declared: Result<ImageHeader?, ImageHeaderError>
        do { declared = .success(try ImageHeader.read(file)) } catch { declared = .failure(error) }
        if case .success(let header?) = declared, let problem = ImagePixelLimit.problem(header, maximum: maxPixels) {
            throw RenderError("image \(path): \(problem)")
        }
        return declared
    }

    /// The file, opened as a regular file: a FIFO, a device node, a socket or a folder is refused unread, naming
    /// what it is. Each reader below is given this file, never the path again.
    private func openFile() throws -> RegularFile {
        do { return try RegularFile(opening: path) } catch { throw RenderError("image \(error)") }
    }

    /// Decodes the file and draws it fitted into `surface`.
    private func decode(_ file: RegularFile, into surface: LayerSurface, declared: Result<ImageHeader?, ImageHeaderError>,
                        isCancelled: () -> Bool) throws {
        switch try ImageFormat(file) {
        case .png:
            let header: ImageHeader
            switch declared {
            case .success(let read?): header = read
            case .success(nil): throw RenderError("image \(path): cannot decode PNG: no PNG header")
            case .failure(let error): throw RenderError("image \(path): cannot decode PNG: \(error)")
            }
            let imageSize = Size(width: header.width, height: header.height)
            let plan = ImageDecodePlan(image: imageSize, layer: surface.size, fit: fit)
            let image = try DecodedRaster(png: file, plan: plan, maxPixels: maxPixels)
            guard !isCancelled() else { return }
            try drawRaster(image, into: surface, plan: plan, imageSize: imageSize)
        case .jpeg:
            if case .failure(let error) = declared { throw RenderError("image \(path): cannot decode JPEG: \(error)") }
            let image = try DecodedRaster(jpeg: file, atLeast: decodeSizeHint(for: surface.size))
            guard !isCancelled() else { return }
            try drawRaster(image, into: surface)
        case .svg:
            let document = try SVGDocument(file, maxPixels: maxPixels)
            guard !isCancelled() else { return }
            let natural = document.intrinsicSize ?? (Double(surface.size.width), Double(surface.size.height))
            try LayerCanvas.draw(into: surface, what: "image \(path)") { cr in
                applyFit(cr, imageWidth: natural.0, imageHeight: natural.1, layer: surface.size)
                try document.render(on: cr, width: natural.0, height: natural.1)
            }
        }
    }

    package var drawDescription: String { "image \(path)" }

    /// The direct path: the fitted pixels from the decoded-image cache painted in place (decoding a missing
    /// entry first, through a layer surface, which fills the cache).
    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let file = try openFile()
        let key = cacheKey(file, layerSize: size)
        guard let cached = DecodedImageCache.shared.surface(for: key), cached.size == size else {
            let layer = LayerSurface(size: size)
            try draw(into: layer, file: file, isCancelled: isCancelled)
            paintLayerSurface(layer, frame: Rect(size: size), opacity: 1, clip: nil, on: cr)
            return
        }
        try withExtendedLifetime(cached) {
            // Cairo only reads a source surface: the cached pixels are not written through this pointer.
            let source = cairo_image_surface_create_for_data(
                cached.bytes.assumingMemoryBound(to: UInt8.self),
                CAIRO_FORMAT_ARGB32, Int32(clamping: size.width), Int32(clamping: size.height),
                Int32(clamping: cached.stride))!
            defer {
                cairo_surface_finish(source)
                cairo_surface_destroy(source)
            }
            let status = cairo_surface_status(source)
            guard status == CAIRO_STATUS_SUCCESS else {
                throw RenderError("image \(path) \(size): cannot wrap cached pixels: \(cairoStatusString(status))")
            }
            cairo_save(cr)
            cairo_set_source_surface(cr, source, 0, 0)
            cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST)
            cairo_paint(cr)
            cairo_restore(cr)
        }
    }

    /// The cache key of this image fitted to `layerSize`: the file's identity (size and modification time) too,
    /// so an edited file is decoded again.
    private func cacheKey(_ file: RegularFile, layerSize: Size) -> DecodedImageCache.Key {
        DecodedImageCache.Key(
            path: path, fileSize: file.size, modifiedSeconds: file.modifiedSeconds,
            modifiedNanoseconds: file.modifiedNanoseconds, layerSize: layerSize, fit: fit)
    }

    /// Draws `image` fitted into the layer. With a `plan`, `image` holds the plan's `source` rectangle of an image
    /// of `imageSize`, at the plan's `decoded` size; without one, the whole image (a JPEG, perhaps DCT-reduced).
    private func drawRaster(_ image: borrowing DecodedRaster, into surface: LayerSurface, plan: ImageDecodePlan? = nil,
                            imageSize: Size? = nil) throws {
        try LayerCanvas.draw(into: surface, what: "image \(path)") { cr in
            let natural = imageSize ?? image.size
            var (scaleX, scaleY) = applyFit(cr, imageWidth: Double(natural.width), imageHeight: Double(natural.height),
                                            layer: surface.size)
            var width = Double(image.size.width), height = Double(image.size.height)
            if let plan, imageSize != nil {
                let reducedX = Double(plan.factorX), reducedY = Double(plan.factorY)
                cairo_translate(cr, Double(plan.source.x), Double(plan.source.y))
                cairo_scale(cr, reducedX, reducedY)
                scaleX *= reducedX
                scaleY *= reducedY
                // A partial block at the edge stands for fewer source pixels: cut it where the rectangle ends.
                width = Double(plan.source.width) / reducedX
                height = Double(plan.source.height) / reducedY
            }
            cairo_set_source_surface(cr, image.handle, 0, 0)
            let isExact = scaleX == 1 && scaleY == 1
            cairo_pattern_set_filter(cairo_get_source(cr), isExact ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD)
            cairo_rectangle(cr, 0, 0, width, height)
            cairo_fill(cr)
        }
    }

    /// Moves and scales `cr` so that an image of the given size, drawn at the origin, lands where `fit` puts it in
    /// a layer of `layer`. Returns the scale.
    @discardableResult
    private func applyFit(_ cr: OpaquePointer, imageWidth width: Double, imageHeight height: Double,
                          layer: Size) -> (Double, Double) {
        let layerWidth = Double(layer.width), layerHeight = Double(layer.height)
        let (scaleX, scaleY) = fit.scale(imageWidth: width, imageHeight: height, layer: layer)
        cairo_translate(cr, (layerWidth - width * scaleX) / 2, (layerHeight - height * scaleY) / 2)
        cairo_scale(cr, scaleX, scaleY)
        return (scaleX, scaleY)
    }

    /// The smallest decoded size a JPEG may be reduced to (libjpeg's 1/2, 1/4, 1/8 DCT scaling) without the fitted
    /// image losing detail; nil decodes at full size.
    private func decodeSizeHint(for layer: Size) -> JPEGSizeHint? {
        switch fit {
        case .contain: JPEGSizeHint(minimum: layer, eitherSide: true)
        case .cover, .fill: JPEGSizeHint(minimum: layer, eitherSide: false)
        case .none: nil
        }
    }
}

/// What an image file holds, told by its first bytes. A plain value.
enum ImageFormat: String, Sendable {
    case png, jpeg, svg

    /// Reads up to 1 KiB of `file`. Throws naming the file when it cannot be read or is none of the three.
    init(_ file: RegularFile) throws {
        let path = file.path
        let head: [UInt8]
        do { head = try file.bytes(at: 0, count: 1024) } catch { throw RenderError("image \(path): \(error.problem)") }
        let count = head.count
        guard let format = Self(signature: head[...]) else {
            let shown = head[..<min(count, 8)].map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return byte < 16 ? "0" + hex : hex
            }.joined(separator: " ")
            throw RenderError("image \(path): not a PNG, JPEG or SVG file (starts with \(count == 0 ? "nothing" : shown))")
        }
        self = format
    }

    init?(signature head: ArraySlice<UInt8>) {
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else {
            // XML text: an optional UTF-8 byte-order mark and white space, then markup that opens an <svg element
            // (after any <?xml?> declaration, comments or doctype).
            var text = head[...]
            if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
            text = text.drop { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
            guard text.first == UInt8(ascii: "<"),
                  String(decoding: text, as: UTF8.self).contains("<svg") else { return nil }
            self = .svg
        }
    }
}

/// How small libjpeg may decode a JPEG: at least `minimum` in both dimensions, or in either when `eitherSide`.
struct JPEGSizeHint {
    var minimum: Size
    var eitherSide: Bool
}

/// The single owner of a Cairo image surface decoded from a PNG or JPEG file, and of the pixel memory the surface
/// borrows. Lives inside one draw call on the render worker.
struct DecodedRaster: ~Copyable {
    let handle: OpaquePointer
    let size: Size
    private let borrowedPixels: UnsafeMutablePointer<UInt32>
    private let freePixels: @convention(c) (UnsafeMutablePointer<UInt32>?) -> Void

    /// The plan's rectangle of the PNG `file`, reduced by the plan's factors (row by row, as rows come).
    init(png file: RegularFile, plan: ImageDecodePlan, maxPixels: Int) throws {
        let path = file.path
        var message = [CChar](repeating: 0, count: 256)
        var width: Int32 = 0, height: Int32 = 0
        let source = plan.source
        let descriptor: Int32
        do { descriptor = try file.duplicateDescriptorAtStart() } catch { throw RenderError("image \(path): \(error.problem)") }
        guard let pixels = kiosk_png_decode_fd(
            descriptor, Int64(maxPixels), Int32(clamping: source.x), Int32(clamping: source.y), Int32(clamping: source.width),
            Int32(clamping: source.height), Int32(clamping: plan.factorX), Int32(clamping: plan.factorY), &width, &height,
            &message, message.count)
        else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw RenderError("image \(path): cannot decode PNG: \(reason)")
        }
        try self.init(wrapping: pixels, size: Size(width: Int(width), height: Int(height)), format: CAIRO_FORMAT_ARGB32,
                      free: kiosk_png_free, what: "PNG", path: path)
    }

    init(jpeg file: RegularFile, atLeast hint: JPEGSizeHint?) throws {
        let path = file.path
        var width: Int32 = 0, height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let descriptor: Int32
        do { descriptor = try file.duplicateDescriptorAtStart() } catch { throw RenderError("image \(path): \(error.problem)") }
        guard let pixels = kiosk_jpeg_decode_fd(
            descriptor, Int32(clamping: hint?.minimum.width ?? 0), Int32(clamping: hint?.minimum.height ?? 0),
            hint?.eitherSide == true ? 1 : 0, &width, &height, &message, message.count)
        else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw RenderError("image \(path): cannot decode JPEG: \(reason)")
        }
        // RGB24 rows of width * 4 bytes are exactly what the decoder wrote.
        try self.init(wrapping: pixels, size: Size(width: Int(width), height: Int(height)), format: CAIRO_FORMAT_RGB24,
                      free: kiosk_jpeg_free, what: "JPEG", path: path)
    }

    /// Cairo borrows `pixels` (rows of `size.width * 4` bytes) until the surface is destroyed; `free` releases them
    /// then, or at once when wrapping fails.
    private init(wrapping pixels: UnsafeMutablePointer<UInt32>, size: Size, format: cairo_format_t,
                 free: @escaping @convention(c) (UnsafeMutablePointer<UInt32>?) -> Void, what: String, path: String) throws {
        let surface = cairo_image_surface_create_for_data(
            UnsafeMutableRawPointer(pixels).assumingMemoryBound(to: UInt8.self), format, Int32(size.width),
            Int32(size.height), Int32(size.width * 4))!
        let status = cairo_surface_status(surface)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(surface)
            free(pixels)
            throw RenderError("image \(path): cannot wrap \(size) \(what) pixels: \(cairoStatusString(status))")
        }
        handle = surface
        self.size = size
        borrowedPixels = pixels
        freePixels = free
    }

    deinit {
        cairo_surface_destroy(handle)
        freePixels(borrowedPixels)
    }
}

/// The single owner of a librsvg handle loaded from a file. Lives inside one draw call on the render worker; a
/// handle is never shared between threads. librsvg itself is loaded the first time (`CKioskSvg`). References to
/// other files resolve against the file's path, and librsvg loads only those in its folder and below.
struct SVGDocument: ~Copyable {
    let handle: OpaquePointer
    let path: String

    /// Loads the SVG `file`. Refused, as a PNG or JPEG would be, when it declares a size of more than `maxPixels`
    /// pixels, or when a raster it embeds or names does, or a file it names in its folder is not a regular file
    /// (`SVGReferences`, checked before librsvg reads the document).
    init(_ file: RegularFile, maxPixels: Int) throws {
        let path = file.path
        let text: [UInt8]
        do { text = try file.contents(maximumBytes: SVGReferences.maximumDocumentBytes) } catch {
            throw RenderError("image \(path): \(error.problem)")
        }
        guard text.count <= SVGReferences.maximumDocumentBytes else {
            throw RenderError("image \(path): SVG of more than \(SVGReferences.maximumDocumentBytes) bytes")
        }
        if let problem = SVGReferences.problem(in: text, folder: PathNames.directory(of: path), maxPixels: maxPixels) {
            throw RenderError("image \(path): \(problem)")
        }
        var message = [CChar](repeating: 0, count: 256)
        let descriptor: Int32
        do { descriptor = try file.duplicateDescriptorAtStart() } catch { throw RenderError("image \(path): \(error.problem)") }
        guard let handle = kiosk_svg_load_fd(descriptor, path, &message, message.count) else {
            throw RenderError("image \(path): \(Self.text(of: message))")
        }
        // A width and height in pixels the document declares are held to the limit as a PNG's are (a viewBox alone
        // is in user units, which say nothing of pixels: the document is drawn at the size it is shown).
        var width = 0.0, height = 0.0
        if Int(kiosk_svg_intrinsic_size(handle, &width, &height)) == KIOSK_SVG_SIZE_PIXELS, width * height > Double(maxPixels) {
            kiosk_svg_free(handle)
            let header = ImageHeader(format: .svg, width: Int(width.rounded(.up)), height: Int(height.rounded(.up)))
            throw RenderError("image \(path): \(ImagePixelLimit.problem(header, maximum: maxPixels) ?? "too large")")
        }
        self.handle = handle
        self.path = path
    }

    deinit { kiosk_svg_free(handle) }

    /// The document's size in pixels: its width and height attributes (at 96 dpi for physical units), else its
    /// viewBox's size; nil when it has neither (it then fills whatever it is drawn into).
    var intrinsicSize: (Double, Double)? {
        var width = 0.0, height = 0.0
        guard Int(kiosk_svg_intrinsic_size(handle, &width, &height)) != KIOSK_SVG_SIZE_NONE else { return nil }
        return (width, height)
    }

    /// Renders the whole document into the `width` x `height` box at the origin of `cr`'s current transform.
    func render(on cr: OpaquePointer, width: Double, height: Double) throws {
        var message = [CChar](repeating: 0, count: 256)
        guard kiosk_svg_render(handle, UnsafeMutableRawPointer(cr), width, height, &message, message.count) != 0 else {
            throw RenderError("image \(path): \(Self.text(of: message))")
        }
    }

    private static func text(of message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
