/// Maps a layer's local coordinates to another space (the screen, or a rasterizing layer's surface): the
/// composition of the frames and transforms along a path in the tree. A plain value built on the main thread.
struct ScreenMapping: Equatable {
    var transform = AffineTransform.identity

    static let identity = ScreenMapping()

    /// The mapping of `layer`'s local space, given that this one maps its parent's local space.
    func appending(_ layer: Layer) -> ScreenMapping {
        let frame = layer.frame, t = layer.transform
        // Local to parent: scale and rotate about the frame's centre, then move to the frame's origin plus the
        // translation.
        let halfWidth = Double(frame.width) / 2, halfHeight = Double(frame.height) / 2
        var local = AffineTransform.scale(x: t.scaleX, y: t.scaleY)
        if t.rotation != 0 { local = AffineTransform.rotation(t.rotation).concatenating(local) }
        let aboutCentre = AffineTransform.translation(x: Double(frame.x) + t.translateX + halfWidth,
                                                      y: Double(frame.y) + t.translateY + halfHeight)
            .concatenating(local)
            .concatenating(.translation(x: -halfWidth, y: -halfHeight))
        return ScreenMapping(transform: transform.concatenating(aboutCentre))
    }

    /// Whether the layer stays an upright rectangle (no rotation, no mirroring), drawn fitted to `rect(covering:)`.
    var isUpright: Bool { transform.isPositiveScaleAndTranslation }

    /// The smallest pixel rectangle covering the local rectangle (0, 0, size): for a rotated layer, the bounding box.
    func rect(covering size: Size) -> Rect {
        transform.boundingRect(width: Double(size.width), height: Double(size.height))
    }

    /// Maps the unit square onto the local rectangle (0, 0, size), then to the screen: `CompositeItem.transform`.
    func unitSquareTransform(for size: Size) -> AffineTransform {
        transform.concatenating(.scale(x: Double(size.width), y: Double(size.height)))
    }
}
