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
/// part of the panel, or a snapshot. Their tiles are hashed as they are written, a band of rows at a time.
///
/// Banded frames: a whole-panel composition that blends an opacity group (a page fading in) is composed at
/// `copy(into:)` a band of rows at a time in a band-sized buffer, each band hashed and written into the scanout
/// buffer; where the shadow buffer holds exactly what is below the group, it is painted over the group's image at
/// 1 − the group's opacity instead of being composed again. So `fingerprint` is read after the copy.
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
    /// Rows composed at a time when a frame blends an opacity group: one row of fingerprint tiles (about 0.5 MB at
    /// 1920 pixels wide, which the cache holds while the band's items and the group are drawn and blended).
    static let bandRows = TileFingerprints.tileSize

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
    /// The newest composition when it is a whole-panel frame that blends an opacity group (a page fading in):
    /// not composed yet. `copy(into:)` composes it a band of rows at a time in `band` and writes each band straight
    /// into the scanout buffer, hashing the band's tiles on the way; the shadow buffer catches up (composed in
    /// place, band by band) only when something needs it.
    private var banded: BandedFrame?
    /// The items whose composition the shadow buffer holds (nil when that is not known), their surfaces held
    /// weakly: a banded cross-fade whose items below the group are these takes them from the shadow buffer instead
    /// of composing them again.
    private var shadowItems: [ComposedItem]? = []
    /// Where `banded`'s background shows.
    private let bandedBackground = DamageRegion()
    /// Scratch region: one band's clip.
    private let bandClip = DamageRegion()
    /// `bandRows` rows of the panel's width, where a banded frame is composed before it is written out; made at
    /// the first banded frame.
    private var band: BandSurface?
    /// Banded frames that took what is below their group from the shadow buffer, for tests and telemetry.
    public private(set) var crossFadesOverShadow = 0
    /// Frames composed the direct way (`DirectFrame` copies, or a banded frame), for tests and telemetry.
    public private(set) var directFrames = 0
    /// Whether whole-panel frames of opaque surfaces may go the direct way; off, every frame is composed into the
    /// shadow buffer (the general path, which tests compare the direct one with).
    public var directFramesEnabled = true
    /// A hash per 64×64 tile of the newest composition, rehashed only where a composition touched.
    public private(set) var tiles: TileFingerprints
    /// A direct frame not written yet is hashed from its surfaces first, and a banded one composed into the shadow
    /// buffer and hashed.
    public var fingerprint: FrameFingerprint? {
        if let frame = direct, !frame.hashed {
            hash(frame, rows: Rect(size: size))
            direct?.hashed = true
        }
        if banded?.hashed == false { catchUpShadow() }
        return tiles.fingerprint
    }
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
            // Hashed from the layer surfaces it copies from as it is written, a band of rows at a time while they
            // are in the cache: the shadow buffer does not hold it.
            direct = frame
            banded = nil
            directFrames += 1
            for pending in pendingByBuffer.values { pending.add(frameDamage) }
            composedFrames += 1
            lastComposedPixelCount = panel.area
            return [panel]
        }
        // A direct frame the shadow buffer has not caught up with is under this damage; a whole-panel composition
        // replaces all of it.
        if wholePanel {
            direct = nil
            banded = nil
        } else {
            catchUpShadow()
        }
        let extents = rotation.sceneRect(frameDamage.extents, sceneSize: sceneSize)

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
        let paintsBackground = firstVisible == nil && !uncovered.isEmpty
        let blendsGroup = items.indices[start...].contains { drawn[$0] && items[$0].group != nil }
        if wholePanel, blendsGroup, directFramesEnabled, rotation == .degrees0 {
            bandedBackground.removeAll()
            if paintsBackground { bandedBackground.add(uncovered) }
            let overShadow = crossFadeOverShadow(items)
            if overShadow != nil { crossFadesOverShadow += 1 }
            banded = BandedFrame(items: items, drawn: drawn, start: start, paintsBackground: paintsBackground,
                                 overShadow: overShadow)
            directFrames += 1
            for pending in pendingByBuffer.values { pending.add(frameDamage) }
            composedFrames += 1
            lastComposedPixelCount = panel.area
            return [panel]
        }
        let background = paintsBackground ? uncovered : nil
        var pixelCount = 0
        let rows = frameDamage.extents
        if rows.height > Self.bandRows, blendsGroup {
            // An opacity group blends a composed image over what is below it: composed a band of rows at a time, the
            // band of the shadow buffer and the group's own band stay in the cache from the first item drawn to the
            // group's blend and the tiles' hash. Bands follow the tile rows.
            var y = rows.y / Self.bandRows * Self.bandRows
            while y < rows.y + rows.height {
                bandClip.removeAll()
                bandClip.add(frameDamage)
                bandClip.intersect(Rect(x: 0, y: y, width: size.width, height: min(Self.bandRows, size.height - y)))
                if !bandClip.isEmpty {
                    pixelCount += draw(items, drawn: drawn, from: start, background: background, clip: bandClip, on: context)
                    cairo_surface_flush(surface)
                    tiles.update(damage: bandClip.rects, pixels: UnsafeRawPointer(pixels), stride: stride)
                }
                y += Self.bandRows
            }
        } else {
            pixelCount = draw(items, drawn: drawn, from: start, background: background, clip: frameDamage, on: context)
            cairo_surface_flush(surface)
            tiles.update(damage: frameDamage.rects, pixels: UnsafeRawPointer(pixels), stride: stride)
        }
        shadowItems = items.map(ComposedItem.init)
        recoverIfContextFailed()

        let composed = frameDamage.rects
        for pending in pendingByBuffer.values { pending.add(frameDamage) }
        composedFrames += 1
        lastComposedPixelCount = pixelCount
        return composed
    }

    /// Draws the items marked `drawn` from `start` on with `cr` inside `clip` (panel rectangles), the background
    /// first where `background` (panel rectangles) needs it; the items of an opacity group are composed together
    /// and blended at the group's opacity. `cr` draws into the shadow buffer, or into a band whose first row is the
    /// panel's `firstRow` (unrotated panels only). Returns the pixels in `clip`.
    private func draw(_ items: [CompositeItem], drawn: [Bool], from start: Int, background: DamageRegion?, clip: DamageRegion,
                      on cr: OpaquePointer, firstRow: Int = 0) -> Int {
        cairo_save(cr)
        if firstRow != 0 { cairo_translate(cr, 0, -Double(firstRow)) }
        cairo_new_path(cr)
        var pixelCount = 0
        // The clip is set in panel coordinates, before the rotation.
        clip.forEachRect { rect in
            cairo_rectangle(cr, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
            pixelCount += rect.area
        }
        cairo_clip(cr)
        if let background {
            // In panel coordinates, before the rotation, like the damage clip.
            cairo_save(cr)
            cairo_new_path(cr)
            background.forEachRect { cairo_rectangle(cr, Double($0.x), Double($0.y), Double($0.width), Double($0.height)) }
            cairo_clip(cr)
            paintBackground(self.background, on: cr)
            cairo_restore(cr)
        }
        if rotation != .degrees0 {
            var matrix = cairoMatrix(rotation.sceneToPanel(sceneSize: sceneSize))
            cairo_transform(cr, &matrix)
        }
        var index = start
        while index < items.endIndex {
            guard let group = items[index].group else {
                if drawn[index] { paint(items[index], on: cr) }
                index += 1
                continue
            }
            // The group's items (consecutive) into a surface of the clip's extents, then that at the group's opacity.
            cairo_push_group(cr)
            while index < items.endIndex, items[index].group?.id == group.id {
                if drawn[index] { paint(items[index], on: cr) }
                index += 1
            }
            cairo_pop_group_to_source(cr)
            cairo_paint_with_alpha(cr, group.opacity)
        }
        cairo_restore(cr)
        return pixelCount
    }

    /// Composes `frame` (a whole panel) a band of rows at a time in `target`: with `base`, `target` is a band and
    /// each band is then written into `base` (XRGB8888 rows `stride` apart, write-only); without, `target` is the
    /// shadow buffer, composed in place. Hashes each band's tiles unless the frame was hashed already. Returns the
    /// frame, hashed.
    private func composeBanded(_ frame: BandedFrame, in target: BandSurface, into base: UnsafeMutableRawPointer?,
                               stride baseStride: Int) -> BandedFrame {
        let rowBytes = size.width * 4
        var y = 0
        while y < size.height {
            let rows = min(Self.bandRows, size.height - y)
            bandClip.removeAll()
            bandClip.add(Rect(x: 0, y: y, width: size.width, height: rows))
            let firstRow = base == nil ? 0 : y
            if base != nil, let over = frame.overShadow {
                drawCrossFade(frame, over, clip: bandClip, on: target.context, firstRow: firstRow)
            } else {
                _ = draw(frame.items, drawn: frame.drawn, from: frame.start,
                         background: frame.paintsBackground ? bandedBackground : nil, clip: bandClip, on: target.context,
                         firstRow: firstRow)
            }
            cairo_surface_flush(target.surface)
            let bandPixels = UnsafeRawPointer(target.pixels).advanced(by: (y - firstRow) * target.stride)
            if !frame.hashed {
                tiles.update(damage: [Rect(x: 0, y: y, width: size.width, height: rows)], pixels: bandPixels, stride: target.stride,
                             firstRow: y)
            }
            if let base {
                var source = bandPixels
                var destination = base.advanced(by: y * baseStride)
                for _ in 0..<rows {
                    destination.copyMemory(from: source, byteCount: rowBytes)
                    source += target.stride
                    destination += baseStride
                }
            }
            y += Self.bandRows
        }
        if base != nil, cairo_status(target.context) != CAIRO_STATUS_SUCCESS {
            compositorLogger.error("compositor \(size): drawing a band failed, band recreated: \(cairoStatusString(cairo_status(target.context)))")
            band = nil
        }
        var hashed = frame
        hashed.hashed = true
        return hashed
    }

    /// A cross-fade over what the shadow buffer holds (`BandedFrame.OverShadow`), inside `clip`, into a band whose
    /// first row is the panel's `firstRow`: the group's items from its opaque one up (the group's image), then the
    /// shadow buffer over them at 1 − the group's opacity, then the items above the group. Per pixel that is the
    /// general path's blend with its two terms swapped (pixman's OVER with a solid mask, on the same 8-bit mask
    /// and its complement), so the same bytes, without composing what is below the group again.
    private func drawCrossFade(_ frame: BandedFrame, _ over: BandedFrame.OverShadow, clip: DamageRegion, on cr: OpaquePointer,
                               firstRow: Int) {
        cairo_save(cr)
        cairo_translate(cr, 0, -Double(firstRow))
        cairo_new_path(cr)
        clip.forEachRect { cairo_rectangle(cr, Double($0.x), Double($0.y), Double($0.width), Double($0.height)) }
        cairo_clip(cr)
        for index in over.group where frame.drawn[index] { paint(frame.items[index], on: cr) }
        cairo_set_source_surface(cr, surface, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
        cairo_paint_with_alpha(cr, over.belowAlpha)
        for index in over.group.upperBound..<frame.items.endIndex where frame.drawn[index] { paint(frame.items[index], on: cr) }
        cairo_restore(cr)
    }

    /// How a banded frame can take what is below its opacity group from the shadow buffer: when the frame has one
    /// group, the shadow buffer holds the composition of exactly the items below it, and an item of the group covers
    /// the whole panel with opaque pixels (a page fading in over the page on screen). Nil otherwise.
    private func crossFadeOverShadow(_ items: [CompositeItem]) -> BandedFrame.OverShadow? {
        guard let first = items.firstIndex(where: { $0.group != nil }), let group = items[first].group else { return nil }
        let end = items[first...].firstIndex { $0.group?.id != group.id } ?? items.endIndex
        guard !items[end...].contains(where: { $0.group != nil }), let shadowItems, shadowItems.count == first,
              zip(shadowItems, items[..<first]).allSatisfy({ $0.looksTheSame(as: $1) }) else { return nil }
        let panel = Rect(size: size)
        guard let from = items[first..<end].lastIndex(where: { item in
            item.opacity >= 1 && item.transform == nil && item.visibleFrame.encloses(panel) && Self.isOpaque(item.source)
        }) else { return nil }
        // Cairo turns an opacity into an 8-bit mask as (opacity × 65535 + 0.5) / 256: the shadow buffer goes over at
        // exactly the complement of the group's mask.
        let mask = Int(group.opacity * 65535 + 0.5) >> 8
        return BandedFrame.OverShadow(group: from..<end, belowAlpha: Double(255 - mask) * 257 / 65535)
    }

    private func paint(_ item: CompositeItem, on cr: OpaquePointer) {
        switch item.source {
        case .surface(let layer):
            paintLayerSurface(layer, frame: item.frame, opacity: item.opacity, clip: item.clip, transform: item.transform, on: cr)
        case .color(let color):
            paintColor(color, frame: item.frame, opacity: item.opacity, clip: item.clip, transform: item.transform, on: cr)
        case .content(let content):
            paintContent(content, frame: item.frame, opacity: item.opacity, clip: item.clip, transform: item.transform, on: cr)
        }
    }

    /// `buffer` must have the compositor's size (a mode change makes a new compositor); a mismatch is a wiring bug.
    public func copy(into buffer: PixelBuffer) -> (rects: [Rect], bytes: Int) {
        precondition(buffer.size == size, "compositor \(size): scanout buffer \(buffer.index) is \(buffer.size)")
        precondition(buffer.stride >= size.width * 4,
                     "compositor \(size): scanout buffer \(buffer.index) stride \(buffer.stride) is too small")
        guard let pending = pendingByBuffer[buffer.index] else {
            if let direct {
                writeDirect(direct, into: buffer.base, stride: buffer.stride)
            } else if let frame = banded, !frame.written {
                writeBanded(frame, into: buffer)
            } else {
                catchUpShadow()
                copyAll(into: buffer)
            }
            pendingByBuffer[buffer.index] = DamageRegion()
            return ([Rect(size: size)], size.width * size.height * 4)
        }
        guard !pending.isEmpty else { return ([], 0) }
        if let direct {
            // The direct frame covers the whole panel: whatever the buffer missed, it is all written.
            writeDirect(direct, into: buffer.base, stride: buffer.stride)
            pending.removeAll()
            return ([Rect(size: size)], size.width * size.height * 4)
        }
        if let frame = banded {
            if !frame.written {
                // Whole-panel too: composed band by band straight into the buffer.
                writeBanded(frame, into: buffer)
                pending.removeAll()
                return ([Rect(size: size)], size.width * size.height * 4)
            }
            // A second buffer wants the same frame: composed once more, into the shadow buffer, and copied from there.
            catchUpShadow()
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
            guard item.opacity >= 1, item.group == nil, item.transform == nil, case .surface(let layer) = item.source, layer.isOpaque,
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

    /// Writes a direct frame, hashing its tiles from its surfaces a band of rows after the band is written (its
    /// rows still in the cache) the first time it is written.
    private func writeDirect(_ frame: DirectFrame, into base: UnsafeMutableRawPointer, stride: Int) {
        let hashes = !frame.hashed
        frame.write(into: base, stride: stride, panel: size, bandRows: Self.bandRows) { band in
            if hashes { hash(frame, rows: band) }
        }
        if hashes { direct?.hashed = true }
    }

    /// Hashes the tiles of `frame` in the panel rows of `rows` from the surfaces it copies from.
    private func hash(_ frame: DirectFrame, rows: Rect) {
        tiles.update(damage: [rows], tile: { frame.pixels(of: $0) }) { y, x, width, hasher in
            frame.feedRow(y, x: x, width: width, into: &hasher)
        }
    }

    private func writeBanded(_ frame: BandedFrame, into buffer: PixelBuffer) {
        if band == nil { band = BandSurface(width: size.width, rows: Self.bandRows) }
        guard let band else {
            catchUpShadow()
            copyAll(into: buffer)
            return
        }
        var written = composeBanded(frame, in: band, into: buffer.base, stride: buffer.stride)
        written.written = true
        banded = written
    }

    /// Brings the shadow buffer up to the newest composition when that went the direct way.
    private func catchUpShadow() {
        if let frame = direct {
            writeDirect(frame, into: pixels, stride: stride)
            direct = nil
            shadowItems = nil
        }
        if let frame = banded {
            banded = nil
            let shadow = BandSurface(surface: surface, context: context, pixels: pixels, stride: stride, ownsSurface: false)
            _ = composeBanded(frame, in: shadow, into: nil, stride: stride)
            shadowItems = frame.items.map(ComposedItem.init)
            recoverIfContextFailed()
        }
    }

    /// Whether `item` paints every pixel of the scene rectangle `area` with opaque pixels. A rotated item never
    /// does: its bounding box has corners it does not paint, and its edges are antialiased.
    private static func opaquelyCovers(_ item: CompositeItem, _ area: Rect) -> Bool {
        guard item.opacity >= 1, item.group == nil, item.transform == nil else { return false }
        guard item.visibleFrame.encloses(area) else { return false }
        return isOpaque(item.source)
    }

    private static func isOpaque(_ source: CompositeItem.Source) -> Bool {
        switch source {
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
        shadowItems = nil
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
    /// Its tiles are hashed (it was written once, or its fingerprint asked for).
    var hashed = false

    /// Where the pixels of the panel rectangle `rect` are, when one copy holds all of them (a tile inside one page):
    /// its top-left pixel in that copy's layer, and the layer's stride. The frame holds the layer meanwhile.
    func pixels(of rect: Rect) -> (pixels: UnsafeRawPointer, stride: Int)? {
        guard let copy = copies.first(where: { $0.target.encloses(rect) }) else { return nil }
        let source = UnsafeRawPointer(copy.layer.bytes)
            .advanced(by: (copy.y + rect.y - copy.target.y) * copy.layer.stride + (copy.x + rect.x - copy.target.x) * 4)
        return (source, copy.layer.stride)
    }

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

    /// Writes the frame into XRGB8888 memory of the `panel`'s size, row by row (write-only on `base`), `bandRows`
    /// rows at a time, calling `afterBand` with each band's rows once they are written. The layer's alpha byte is
    /// 0xFF, as the general path's SOURCE copy leaves it.
    func write(into base: UnsafeMutableRawPointer, stride: Int, panel: Size, bandRows: Int, afterBand: (Rect) -> Void) {
        var y = 0
        while y < panel.height {
            let end = min(y + bandRows, panel.height)
            for copy in copies {
                let top = max(y, copy.target.y), bottom = min(end, copy.target.y + copy.target.height)
                guard top < bottom else { continue }
                withExtendedLifetime(copy.layer) {
                    let rowBytes = copy.target.width * 4
                    var source = UnsafeRawPointer(copy.layer.bytes)
                        .advanced(by: (copy.y + top - copy.target.y) * copy.layer.stride + copy.x * 4)
                    var destination = base.advanced(by: top * stride + copy.target.x * 4)
                    for _ in top..<bottom {
                        destination.copyMemory(from: source, byteCount: rowBytes)
                        source += copy.layer.stride
                        destination += stride
                    }
                }
            }
            afterBand(Rect(x: 0, y: y, width: panel.width, height: end - y))
            y = end
        }
    }
}

/// A whole-panel composition that blends an opacity group, kept to be composed band by band (`ShadowCompositor`'s
/// banded frames): the items, which of them are drawn (the rest are hidden under opaque items), where to start, and
/// whether the background shows. Holds the items' surfaces until the frame is replaced. Main thread.
struct BandedFrame {
    let items: [CompositeItem]
    let drawn: [Bool]
    let start: Int
    let paintsBackground: Bool
    /// A page fading in over the page on screen: the group's items from `group.lowerBound` (an opaque one covering
    /// the panel) make the group's image, and the shadow buffer, which holds what is below the group, goes over it
    /// at `belowAlpha`.
    struct OverShadow {
        let group: Range<Int>
        let belowAlpha: Double
    }
    let overShadow: OverShadow?
    /// Its tiles are hashed (it was composed once).
    var hashed = false
    /// It was written into a scanout buffer.
    var written = false
}

/// An item the shadow buffer was composed from, without keeping its surface alive: a surface freed since matches
/// nothing. Main thread.
struct ComposedItem {
    private weak var surface: LayerSurface?
    private let wasSurface: Bool
    /// The item, a surface's replaced by a fill so that it holds no pixels.
    private let bare: CompositeItem

    init(_ item: CompositeItem) {
        var bare = item
        if case .surface(let layer) = item.source {
            surface = layer
            wasSurface = true
            bare.source = .color(.black)
        } else {
            wasSurface = false
        }
        self.bare = bare
    }

    func looksTheSame(as other: CompositeItem) -> Bool {
        guard case .surface(let layer) = other.source else { return !wasSurface && bare.looksTheSame(as: other) }
        guard wasSurface, let surface, surface === layer else { return false }
        var otherBare = other
        otherBare.source = .color(.black)
        return bare.looksTheSame(as: otherBare)
    }
}

/// A Cairo image surface (XRGB8888) and a context on it: the band a banded frame is composed in, or the shadow
/// buffer seen the same way. Main thread.
final class BandSurface {
    let surface: OpaquePointer
    let context: OpaquePointer
    let pixels: UnsafeMutableRawPointer
    let stride: Int
    private let ownsSurface: Bool

    init(surface: OpaquePointer, context: OpaquePointer, pixels: UnsafeMutableRawPointer, stride: Int, ownsSurface: Bool) {
        self.surface = surface; self.context = context; self.pixels = pixels; self.stride = stride; self.ownsSurface = ownsSurface
    }

    /// Nil when Cairo cannot make it (out of memory): the frame is then composed into the shadow buffer instead.
    convenience init?(width: Int, rows: Int) {
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(rows))!
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let data = cairo_image_surface_get_data(surface) else {
            compositorLogger.error("compositor band \(width)x\(rows): allocation failed: \(cairoStatusString(cairo_surface_status(surface)))")
            cairo_surface_destroy(surface)
            return nil
        }
        let context = cairo_create(surface)!
        guard cairo_status(context) == CAIRO_STATUS_SUCCESS else {
            cairo_destroy(context)
            cairo_surface_destroy(surface)
            return nil
        }
        self.init(surface: surface, context: context, pixels: UnsafeMutableRawPointer(data),
                  stride: Int(cairo_image_surface_get_stride(surface)), ownsSurface: true)
    }

    deinit {
        guard ownsSurface else { return }
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }
}

@available(*, unavailable, message: "the compositor and its Cairo context belong to the main thread")
extension ShadowCompositor: Sendable {}
