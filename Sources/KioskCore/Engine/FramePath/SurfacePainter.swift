/// Source-over painting on premultiplied ARGB32 `LayerSurface`s, for flattening a rasterized subtree on a render
/// worker. The core imports no drawing library, so this is the minimum a flattening needs: solid fills and
/// surface copies with opacity, scaled by nearest neighbour. Content that wants better scaling draws at its own
/// size; flattening itself never scales unless a descendant has a scale transform.
///
/// Runs on whichever thread owns the destination surface (a render worker).
enum SurfacePainter {
    /// Fills `rect` (destination pixels, clipped to the surface) with `color` at `opacity`.
    static func fill(_ surface: LayerSurface, rect: Rect, color: Color, opacity: Double) {
        let area = rect.intersection(Rect(size: surface.size))
        let alpha = min(max(color.alpha * opacity, 0), 1)
        guard !area.isEmpty, alpha > 0 else { return }
        func channel(_ value: Double) -> UInt32 { UInt32((min(max(value, 0), 1) * alpha * 255).rounded()) }
        let source = channel(1) << 24 | channel(color.red) << 16 | channel(color.green) << 8 | channel(color.blue)
        for y in area.y..<area.maxY {
            let row = y * surface.stride
            for x in area.x..<area.maxX {
                let offset = row + x * 4
                let destination = surface.bytes.load(fromByteOffset: offset, as: UInt32.self)
                surface.bytes.storeBytes(of: over(source, destination), toByteOffset: offset, as: UInt32.self)
            }
        }
    }

    /// Draws `source` stretched over `frame` (destination pixels) at `opacity`, clipped to the surface.
    static func draw(_ source: LayerSurface, into surface: LayerSurface, frame: Rect, opacity: Double) {
        let area = frame.intersection(Rect(size: surface.size))
        let alpha = UInt32((min(max(opacity, 0), 1) * 255).rounded())
        guard !area.isEmpty, alpha > 0 else { return }
        if alpha == 255, source.isOpaque, frame.size == source.size {
            // Opaque pixels at 1:1 replace what is below: a copy of each row.
            let rowBytes = area.width * 4
            for y in area.y..<area.maxY {
                let from = source.bytes + (y - frame.y) * source.stride + (area.x - frame.x) * 4
                (surface.bytes + y * surface.stride + area.x * 4).copyMemory(from: from, byteCount: rowBytes)
            }
            return
        }
        let sourceWidth = source.size.width, sourceHeight = source.size.height
        for y in area.y..<area.maxY {
            let sourceY = min(sourceHeight - 1, (y - frame.y) * sourceHeight / frame.height)
            let sourceRow = sourceY * source.stride, row = y * surface.stride
            for x in area.x..<area.maxX {
                let sourceX = min(sourceWidth - 1, (x - frame.x) * sourceWidth / frame.width)
                var pixel = source.bytes.load(fromByteOffset: sourceRow + sourceX * 4, as: UInt32.self)
                if alpha < 255 { pixel = scaled(pixel, by: alpha) }
                let offset = row + x * 4
                let destination = surface.bytes.load(fromByteOffset: offset, as: UInt32.self)
                surface.bytes.storeBytes(of: over(pixel, destination), toByteOffset: offset, as: UInt32.self)
            }
        }
    }

    /// Premultiplied source over destination.
    private static func over(_ source: UInt32, _ destination: UInt32) -> UInt32 {
        let sourceAlpha = source >> 24
        if sourceAlpha == 255 { return source }
        if sourceAlpha == 0 { return destination }
        return source &+ scaled(destination, by: 255 - sourceAlpha)
    }

    /// Every channel multiplied by `factor` / 255, rounded.
    private static func scaled(_ pixel: UInt32, by factor: UInt32) -> UInt32 {
        var result: UInt32 = 0
        for shift: UInt32 in [0, 8, 16, 24] {
            let product = ((pixel >> shift) & 0xFF) * factor + 128
            result |= ((product + (product >> 8)) >> 8) << shift
        }
        return result
    }
}
