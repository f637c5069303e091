import CCairo
import KioskCore
import Logging

let compositorLogger = Logger(label: "kioskd.compositor")

/// The CPU compositor: composes damaged rectangles into a shadow buffer in ordinary cached RAM, then copies into
/// each scanout buffer exactly what that buffer has missed. Lives on the main thread (the commit observer drives
/// it); it holds a Cairo context, so it is deliberately not `Sendable`.
///
/// Why a shadow buffer: on the boards kioskd targets, dumb buffers are write-combined memory where reading (and so
/// blending) is many times slower than in cached RAM. All blending happens here; scanout buffers are only written,
/// by `memcpy`, one row of a damaged rectangle at a time.
///
/// Pending damage lives per scanout buffer index: from the `copy(into:)` that last brought the buffer up to date
/// until the next one. Every composed region is added to every known buffer's pending region, so a buffer that sat
/// on screen (or in the flip queue) for two frames receives both frames' damage when it comes back.
///
/// Frames written straight into the scanout buffer: when a whole-panel composition is opaque layer surfaces at
/// whole-pixel positions and their own size that tile the panel (a slide's two flattened pages), blending would
/// only copy, so `compose` records the copies (`DirectFrame`) and `copy(into:)` makes them from the surfaces into
/// the scanout buffer: one frame of memory traffic instead of a composition into the shadow buffer and a copy out
/// of it. The shadow buffer catches up (the same copies) only when something needs it: a later composition of
/// part of the panel, or a snapshot.
///
/// Output rotation: items and damage arrive in scene coordinates; the shadow buffer is in the panel's. Composition
/// draws through a Cairo matrix that turns the scene onto the panel (a quarter turn with integer offsets maps pixel
/// centres onto pixel centres, so upright layers stay pixel-exact), and damage is turned into panel rectangles
/// once, on the way in: the clip, the per-buffer pending damage and FB_DAMAGE_CLIPS are all panel rectangles, and
/// copying into scanout buffers stays a plain `memcpy` of rows.
public final class ShadowCompositor: Compositing {
    /// FB_DAMAGE_CLIPS is a list of rectangles; pixman's banding can split a few overlapping widgets into many thin
    /// ones. Past this count the bounding box is copied instead: a bounded blob for the kernel, and a few extra bytes
    /// of memcpy are cheaper than a long walk of rectangles per row band.
    public static let maxDamageClips = 32

    /// The panel's size: the mode size, and the shadow buffer's.
    public let size: Size
    /// The size layers are laid out in: `size` with width and height swapped at 90 and 270 degrees.
    public let sceneSize: Size
    public let rotation: OutputRotation
    /// Painted wherever no opaque layer covers the damage. Alpha is ignored: the screen has none.
    public var background: Color

    /// Frames composed with a non-empty damage region, for telemetry.
    public private(set) var composedFrames = 0
    /// Pixels recomposed by the most recent `compose`.
    public private(set) var lastComposedPixelCount = 0

    /// The shadow buffer: CAIRO_FORMAT_RGB24, which is XRGB8888 on the little-endian hosts kioskd runs on.
    private let surface: OpaquePointer
    private var context: OpaquePointer
    private let pixels: UnsafeMutableRawPointer
    private let stride: Int
    /// Scratch region reused by every `compose`, so a frame costs no region allocation.
    private let frameDamage = DamageRegion()
    /// Scratch region: the part of the damage no opaque item covers, where the background shows.
    private let uncovered = DamageRegion()
    /// Scratch region for `directFrame`.
    private let scratch = DamageRegion()
    private var pendingByBuffer: [Int: DamageRegion] = [:]
    /// The newest composition when it went the direct way: the shadow buffer does not hold it yet.
    private var direct: DirectFrame?
    /// Frames composed the direct way (`DirectFrame`), for tests and telemetry.
    public private(set) var directFrames = 0
    /// Whether whole-panel frames of opaque surfaces may go the direct way; off, every frame is composed into the
    /// shadow buffer (the general path, which tests compare the direct one with).
    public var directFramesEnabled = true
    /// A hash per 64×64 tile of the newest composition, rehashed only where a composition touched.
    public private(set) var tiles: TileFingerprints
    public var fingerprint: FrameFingerprint? { tiles.fingerprint }
    public var tilesHashed: Int { tiles.tilesHashed }

    /// A shadow buffer of the panel's `size` (the mode size, whatever the rotation) filled with `background`.
    public init(size: Size, background: Color = .black, rotation: OutputRotation = .degrees0) throws {
        guard size.width > 0, size.height > 0, size.width <= 32767, size.height <= 32767 else {
            throw RenderError("compositor \(size): invalid output size")
        }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(size.width), Int32(size.height))!
        let surfaceStatus = cairo_surface_status(surface)
        guard surfaceStatus == CAIRO_STATUS_SUCCESS, let data = cairo_image_surface_get_data(surface) else {
            cairo_surface_destroy(surface)
            throw RenderError("compositor \(size): shadow buffer allocation failed: \(cairoStatusString(surfaceStatus))")
        }
        let context = cairo_create(surface)!
        let contextStatus = cairo_status(context)
        guard contextStatus == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(context)
            cairo_surface_destroy(surface)
            throw RenderError("compositor \(size): cairo_create failed: \(cairoStatusString(contextStatus))")
        }
        self.size = size
        self.sceneSize = rotation.sceneSize(forPanel: size)
        self.rotation = rotation
        self.background = background
        self.surface = surface
        self.context = context
        self.pixels = UnsafeMutableRawPointer(data)
        self.stride = Int(cairo_image_surface_get_stride(surface))
        paintBackground(background, on: context)
        cairo_surface_flush(surface)
        let filled = UnsafeRawPointer(data).load(as: UInt32.self)
        self.tiles = TileFingerprints(size: size, color: filled)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    @discardableResult
    public func compose(_ items: [CompositeItem], damage: [Rect]) -> [Rect] {
        frameDamage.removeAll()
        let scene = Rect(size: sceneSize)
        for rect in damage { frameDamage.add(panelRect(rect.intersection(scene))) }
        frameDamage.intersect(Rect(size: size))
        guard !frameDamage.isEmpty else {
            lastComposedPixelCount = 0
            return []
        }
        let panel = Rect(size: size)
        let wholePanel = frameDamage.rectangleCount == 1 && frameDamage.extents == panel
        if wholePanel, directFramesEnabled, let frame = directFrame(items) {
            direct = frame
            directFrames += 1
            // Hashed from the layer surfaces the frame copies from: the shadow buffer does not hold it.
            tiles.update(damage: [panel]) { y, x, width, hasher in frame.feedRow(y, x: x, width: width, into: &hasher) }
            for pending in pendingByBuffer.values { pending.add(frameDamage) }
            composedFrames += 1
            lastComposedPixelCount = panel.area
            return [panel]
        }
        // A direct frame the shadow buffer has not caught up with is under this damage; a whole-panel composition
        // replaces all of it.
        if wholePanel { direct = nil } else { catchUpShadow() }
        let extents = rotation.sceneRect(frameDamage.extents, sceneSize: sceneSize)
        let cr = context

        cairo_save(cr)
        cairo_new_path(cr)
        var pixelCount = 0
        // The clip is set in panel coordinates, before the rotation.
        frameDamage.forEachRect { rect in
            cairo_rectangle(cr, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
            pixelCount += rect.area
        }
        cairo_clip(cr)

        // Everything below the topmost layer that covers the whole damage with opaque pixels is hidden: start there.
        let firstVisible = items.lastIndex { Self.opaquelyCovers($0, extents) }
        let start = firstVisible ?? items.startIndex
        // Top down: an item whose part of the damage opaque items above it cover entirely is not drawn, and the
        // background fills only what no opaque item covers (two pages side by side in a slide: none of it).
        uncovered.removeAll()
        uncovered.add(frameDamage)
        var drawn = [Bool](repeating: false, count: items.count)
        for index in items.indices[start...].reversed() {
            let item = items[index], panel = panelRect(item.visibleFrame)
            guard uncovered.intersects(panel) else { continue }
            drawn[index] = true
            if Self.opaquelyCovers(item, item.visibleFrame) { uncovered.subtract(panel) }
        }
        if firstVisible == nil, !uncovered.isEmpty {
            // In panel coordinates, before the rotation, like the damage clip.
            cairo_save(cr)
            cairo_new_path(cr)
            uncovered.forEachRect { cairo_rectangle(cr, Double($0.x), Double($0.y), Double($0.width), Double($0.height)) }
            cairo_clip(cr)
            paintBackground(background, on: cr)
            cairo_restore(cr)
        }
        if rotation != .degrees0 {
            var matrix = cairoMatrix(rotation.sceneToPanel(sceneSize: sceneSize))
            cairo_transform(cr, &matrix)
        }
        for index in items.indices[start...] where drawn[index] {
            let item = items[index]
            switch item.source {
            case .surface(let layer):
                paintLayerSurface(layer, frame: item.frame, opacity: item.opacity, clip: item.clip, transform: item.transform, on: cr)
            case .color(let color):
                paintColor(color, frame: item.frame, opacity: item.opacity, clip: item.clip, transform: item.transform, on: cr)
            case .content(let content):
                paintContent(content, frame: item.frame, opacity: item.opacity, clip: item.clip, transform: item.transform, on: cr)
            }
        }
        cairo_restore(cr)
        cairo_surface_flush(surface)
        recoverIfContextFailed()

        let composed = frameDamage.rects
        tiles.update(damage: composed, pixels: UnsafeRawPointer(pixels), stride: stride)
        for pending in pendingByBuffer.values { pending.add(frameDamage) }
        composedFrames += 1
        lastComposedPixelCount = pixelCount
        return composed
    }

    /// `buffer` must have the compositor's size (a mode change makes a new compositor); a mismatch is a wiring bug.
    public func copy(into buffer: PixelBuffer) -> (rects: [Rect], bytes: Int) {
        precondition(buffer.size == size, "compositor \(size): scanout buffer \(buffer.index) is \(buffer.size)")
        precondition(buffer.stride >= size.width * 4,
                     "compositor \(size): scanout buffer \(buffer.index) stride \(buffer.stride) is too small")
        guard let pending = pendingByBuffer[buffer.index] else {
            if let direct {
                direct.write(into: buffer.base, stride: buffer.stride)
            } else {
                copyAll(into: buffer)
            }
            pendingByBuffer[buffer.index] = DamageRegion()
            return ([Rect(size: size)], size.width * size.height * 4)
        }
        guard !pending.isEmpty else { return ([], 0) }
        if let direct {
            // The direct frame covers the whole panel: whatever the buffer missed, it is all written.
            direct.write(into: buffer.base, stride: buffer.stride)
            pending.removeAll()
            return ([Rect(size: size)], size.width * size.height * 4)
        }
        let rects = pending.rectangleCount > Self.maxDamageClips ? [pending.extents] : pending.rects
        var bytes = 0
        for rect in rects { bytes += copy(rect, into: buffer) }
        pending.removeAll()
        return (rects, bytes)
    }

    /// A scene rectangle on the panel.
    private func panelRect(_ rect: Rect) -> Rect {
        rect.isEmpty ? rect : rotation.panelRect(rect, sceneSize: sceneSize)
    }

    public func invalidateBuffers() {
        pendingByBuffer.removeAll()
    }

    public func snapshot() -> [UInt8] {
        catchUpShadow()
        let rowBytes = size.width * 4
        return [UInt8](unsafeUninitializedCapacity: rowBytes * size.height) { out, count in
            let base = UnsafeMutableRawPointer(out.baseAddress!)
            for y in 0..<size.height {
                base.advanced(by: y * rowBytes).copyMemory(from: pixels.advanced(by: y * stride), byteCount: rowBytes)
            }
            count = rowBytes * size.height
        }
    }

    private func copyAll(into buffer: PixelBuffer) {
        let rowBytes = size.width * 4
        if buffer.stride == stride && stride == rowBytes {
            buffer.base.copyMemory(from: pixels, byteCount: rowBytes * size.height)
            return
        }
        for y in 0..<size.height {
            buffer.base.advanced(by: y * buffer.stride).copyMemory(from: pixels.advanced(by: y * stride), byteCount: rowBytes)
        }
    }

    /// Copies one rectangle (already inside the screen) row by row; returns the bytes written.
    private func copy(_ rect: Rect, into buffer: PixelBuffer) -> Int {
        let rowBytes = rect.width * 4
        var source = pixels.advanced(by: rect.y * stride + rect.x * 4)
        var destination = buffer.base.advanced(by: rect.y * buffer.stride + rect.x * 4)
        for _ in 0..<rect.height {
            destination.copyMemory(from: source, byteCount: rowBytes)
            source += stride
            destination += buffer.stride
        }
        return rowBytes * rect.height
    }

    /// The copies that make `items` on the whole panel, when each pixel comes from an opaque layer surface drawn at
    /// its own size at a whole-pixel position (so the general path would copy it too: `paintLayerSurface` paints
    /// such a surface with SOURCE and NEAREST); nil otherwise. Unrotated panels only. Top down: each item gives the
    /// part of its visible frame that items above it leave uncovered.
    private func directFrame(_ items: [CompositeItem]) -> DirectFrame? {
        guard rotation == .degrees0 else { return nil }
        let panel = Rect(size: size)
        uncovered.removeAll()
        uncovered.add(panel)
        var copies: [DirectFrame.Copy] = []
        for item in items.reversed() {
            let visible = item.visibleFrame.intersection(panel)
            guard !visible.isEmpty, uncovered.intersects(visible) else { continue }
            guard item.opacity >= 1, item.transform == nil, case .surface(let layer) = item.source, layer.isOpaque,
                  layer.size == item.frame.size else { return nil }
            scratch.removeAll()
            scratch.add(uncovered)
            scratch.intersect(visible)
            scratch.forEachRect { rect in
                copies.append(DirectFrame.Copy(layer: layer, x: rect.x - item.frame.x, y: rect.y - item.frame.y, target: rect))
            }
            uncovered.subtract(visible)
            if uncovered.isEmpty { return DirectFrame(copies: copies) }
        }
        return nil
    }

    /// Brings the shadow buffer up to the newest composition when that went the direct way.
    private func catchUpShadow() {
        guard let frame = direct else { return }
        direct = nil
        frame.write(into: pixels, stride: stride)
    }

    /// Whether `item` paints every pixel of the scene rectangle `area` with opaque pixels. A rotated item never
    /// does: its bounding box has corners it does not paint, and its edges are antialiased.
    private static func opaquelyCovers(_ item: CompositeItem, _ area: Rect) -> Bool {
        guard item.opacity >= 1, item.transform == nil else { return false }
        guard item.visibleFrame.encloses(area) else { return false }
        switch item.source {
        case .surface(let layer): return layer.isOpaque
        case .color(let color): return color.alpha >= 1
        case .content(let content): return content.isOpaque
        }
    }

    /// A Cairo context that hit an error ignores every later call, which would freeze the screen for good. The
    /// shadow buffer itself is fine, so a fresh context on it resumes drawing with the next frame.
    private func recoverIfContextFailed() {
        let status = cairo_status(context)
        guard status != CAIRO_STATUS_SUCCESS else { return }
        compositorLogger.error("compositor \(size): drawing failed, context recreated: \(cairoStatusString(status))")
        let fresh = cairo_create(surface)!
        guard cairo_status(fresh) == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(fresh)
            return
        }
        cairo_destroy(context)
        context = fresh
    }
}

/// A whole-panel frame made of copies from opaque layer surfaces (`ShadowCompositor`'s direct frames): each copy
/// takes `target`'s size from its layer at (`x`, `y`) to `target` on the panel. Together the targets tile the panel.
/// Holds the surfaces until the frame is replaced. Main thread, with the compositor.
struct DirectFrame {
    struct Copy {
        let layer: LayerSurface
        let x: Int
        let y: Int
        let target: Rect
    }

    let copies: [Copy]

    /// Feeds the `width` pixels of panel row `y` from column `x`, left to right, into `hasher`: from each copy's
    /// layer in turn (the targets tile the panel, so exactly one holds each pixel).
    func feedRow(_ y: Int, x: Int, width: Int, into hasher: inout TileHasher) {
        var cursor = x
        let end = x + width
        while cursor < end {
            guard let copy = copies.first(where: { $0.target.y <= y && y < $0.target.y + $0.target.height
                                                    && $0.target.x <= cursor && cursor < $0.target.x + $0.target.width }) else { return }
            let count = min(end, copy.target.x + copy.target.width) - cursor
            withExtendedLifetime(copy.layer) {
                let source = UnsafeRawPointer(copy.layer.bytes)
                    .advanced(by: (copy.y + y - copy.target.y) * copy.layer.stride + (copy.x + cursor - copy.target.x) * 4)
                hasher.feed(source, count: count)
            }
            cursor += count
        }
    }

    /// Writes the frame into XRGB8888 memory of the panel's size, row by row (write-only on `base`). The layer's
    /// alpha byte is 0xFF, as the general path's SOURCE copy leaves it.
    func write(into base: UnsafeMutableRawPointer, stride: Int) {
        for copy in copies {
            withExtendedLifetime(copy.layer) {
                let rowBytes = copy.target.width * 4
                var source = UnsafeRawPointer(copy.layer.bytes).advanced(by: copy.y * copy.layer.stride + copy.x * 4)
                var destination = base.advanced(by: copy.target.y * stride + copy.target.x * 4)
                for _ in 0..<copy.target.height {
                    destination.copyMemory(from: source, byteCount: rowBytes)
                    source += copy.layer.stride
                    destination += stride
                }
            }
        }
    }
}

@available(*, unavailable, message: "the compositor and its Cairo context belong to the main thread")
extension ShadowCompositor: Sendable {}
