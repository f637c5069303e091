import KioskCore

/// Which part of an image is seen in a layer and how much it can be reduced while decoding without losing detail:
/// the rectangle of image pixels the fit leaves visible (all of it for `contain` and `fill`, the middle for `cover`
/// and for `none` when the image is larger than the layer), and per axis the largest whole factor that keeps the
/// decoded image at least as large as it is shown (as libjpeg's DCT scaling does; Cairo's filter makes the last,
/// fractional step when it draws, and scales up). The decoded image is under twice the shown size on each axis:
/// memory in proportion to what is shown, not to what the file holds. A pure value; any thread.
struct ImageDecodePlan: Equatable {
    /// In image pixels.
    var source: Rect
    /// Source pixels per decoded pixel, per axis (1 or more).
    var factorX: Int
    var factorY: Int

    /// `source` reduced by the factors, a partial block at the right and bottom edges counting as a pixel.
    var decoded: Size {
        Size(width: (source.width + factorX - 1) / factorX, height: (source.height + factorY - 1) / factorY)
    }

    init(image: Size, layer: Size, fit: ImageContent.Fit) {
        let width = Double(image.width), height = Double(image.height)
        let (scaleX, scaleY) = fit.scale(imageWidth: width, imageHeight: height, layer: layer)
        // Where the image's origin lands in the layer, and which image pixels cover the layer.
        let originX = (Double(layer.width) - width * scaleX) / 2, originY = (Double(layer.height) - height * scaleY) / 2
        func span(origin: Double, scale: Double, layerSide: Int, imageSide: Int) -> (Int, Int) {
            let first = max(0, Int(((0 - origin) / scale).rounded(.down)))
            let end = min(imageSide, Int(((Double(layerSide) - origin) / scale).rounded(.up)))
            return end > first ? (first, end - first) : (0, imageSide)
        }
        let (x, w) = span(origin: originX, scale: scaleX, layerSide: layer.width, imageSide: image.width)
        let (y, h) = span(origin: originY, scale: scaleY, layerSide: layer.height, imageSide: image.height)
        source = Rect(x: x, y: y, width: w, height: h)
        factorX = min(w, max(1, Int((1 / scaleX).rounded(.down))))
        factorY = min(h, max(1, Int((1 / scaleY).rounded(.down))))
    }

    /// Whether the plan decodes the whole image at its own size.
    func isWhole(_ image: Size) -> Bool {
        source == Rect(size: image) && factorX == 1 && factorY == 1
    }
}

extension ImageContent.Fit {
    /// The scale that maps an image of the given size onto a layer of `layer`, per axis.
    func scale(imageWidth width: Double, imageHeight height: Double, layer: Size) -> (Double, Double) {
        let layerWidth = Double(layer.width), layerHeight = Double(layer.height)
        switch self {
        case .contain:
            let s = min(layerWidth / width, layerHeight / height)
            return (s, s)
        case .cover:
            let s = max(layerWidth / width, layerHeight / height)
            return (s, s)
        case .fill: return (layerWidth / width, layerHeight / height)
        case .none: return (1, 1)
        }
    }
}
