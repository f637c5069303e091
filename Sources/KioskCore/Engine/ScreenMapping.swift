/// Maps a layer's local coordinates to another space (the screen, or a rasterizing layer's surface):
/// `x' = scaleX * x + offsetX`. Composition of the frames and transforms along a path in the tree; a plain value
/// built on the main thread.
struct ScreenMapping: Equatable {
    var scaleX = 1.0, scaleY = 1.0
    var offsetX = 0.0, offsetY = 0.0

    static let identity = ScreenMapping()

    /// The mapping of `layer`'s local space, given that this one maps its parent's local space.
    func appending(_ layer: Layer) -> ScreenMapping {
        let frame = layer.frame, transform = layer.transform
        // Local to parent: scale about the frame's centre, then move to the frame's origin plus the translation.
        let localOffsetX = Double(frame.x) + transform.translateX + Double(frame.width) / 2 * (1 - transform.scaleX)
        let localOffsetY = Double(frame.y) + transform.translateY + Double(frame.height) / 2 * (1 - transform.scaleY)
        return ScreenMapping(
            scaleX: scaleX * transform.scaleX, scaleY: scaleY * transform.scaleY,
            offsetX: scaleX * localOffsetX + offsetX, offsetY: scaleY * localOffsetY + offsetY
        )
    }

    /// The smallest pixel rectangle covering the local rectangle (0, 0, size).
    func rect(covering size: Size) -> Rect {
        let x0 = offsetX, x1 = offsetX + scaleX * Double(size.width)
        let y0 = offsetY, y1 = offsetY + scaleY * Double(size.height)
        // The tolerance keeps exact integer positions that picked up rounding noise from growing by a pixel.
        let tolerance = 1e-6
        let minX = Int((min(x0, x1) + tolerance).rounded(.down)), maxX = Int((max(x0, x1) - tolerance).rounded(.up))
        let minY = Int((min(y0, y1) + tolerance).rounded(.down)), maxY = Int((max(y0, y1) - tolerance).rounded(.up))
        return Rect(x: minX, y: minY, width: max(0, maxX - minX), height: max(0, maxY - minY))
    }
}
