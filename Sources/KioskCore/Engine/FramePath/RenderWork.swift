/// What a render job draws, captured on the main thread when the render is dispatched. Only immutable values: the
/// content (a `Sendable` description of what to paint) or a flattened subtree, and the size. A plain value that
/// crosses to a render worker.
enum RenderWork: Sendable {
    case content(any LayerContent)
    case rasterized(RasterPlan)

    /// The kind telemetry groups render times by.
    var kind: String {
        switch self {
        case .content(let content): content.kind
        case .rasterized: "rasterized"
        }
    }

    var isOpaque: Bool {
        switch self {
        case .content(let content): content.isOpaque
        case .rasterized(let plan): plan.isOpaque
        }
    }

    /// Draws into a fresh surface of `size`. Runs on a render worker (or, for a synchronous layer, on the main
    /// thread inside the display observer).
    func render(size: Size, isCancelled: () -> Bool) throws -> LayerSurface {
        switch self {
        case .content(let content):
            if let shared = try content.sharedSurface(size: size, isCancelled: isCancelled) { return shared }
            let surface = LayerSurface(size: size, isOpaque: content.isOpaque)
            try content.draw(into: surface, isCancelled: isCancelled)
            return surface
        case .rasterized(let plan):
            return try plan.render(size: size, isCancelled: isCancelled)
        }
    }
}

/// A rasterized subtree, flattened on the main thread into a back-to-front list of what to paint where, in the
/// rasterizing layer's pixels. A plain value that crosses to a render worker.
///
/// `SurfacePainter` draws upright rectangles only: a descendant rotated inside a rasterized subtree is painted
/// upright over its bounding box, and `clipsToBounds` of descendants is not applied (the rasterizing layer's own
/// surface bounds everything). The rasterizing layer itself may be rotated: its surface is composited turned.
struct RasterPlan: Sendable {
    struct Element: Sendable {
        enum Paint: Sendable {
            /// Drawn at its own layer's size, then placed (and scaled if a transform says so) at `frame`.
            case content(any LayerContent, size: Size)
            /// The descendant's own finished render, current (`Layer.hasCurrentSurface`): copied, not drawn again.
            /// Immutable once published, so a worker may read it.
            case surface(LayerSurface)
            case color(Color)
        }

        var paint: Paint
        /// Where it lands in the rasterizing layer's surface.
        var frame: Rect
        /// Opacity relative to the rasterizing layer, whose own opacity is applied when it is composited.
        var opacity: Double
    }

    var elements: [Element] = []

    /// Every pixel of the flattened surface ends up opaque: an element covers all of it with opaque pixels at full
    /// opacity (what is painted over an opaque pixel stays opaque). The compositor then copies it rather than
    /// blending, and draws nothing under it.
    var isOpaque: Bool {
        let whole = Rect(size: bounds)
        return elements.contains { element in
            guard element.opacity >= 1, element.frame.encloses(whole) else { return false }
            switch element.paint {
            case .content(let content, _): return content.isOpaque
            case .color(let color): return color.alpha >= 1
            case .surface(let surface): return surface.isOpaque
            }
        }
    }

    /// The rasterizing layer's size.
    private var bounds = Size(width: 0, height: 0)

    /// The plan for `root`'s subtree as it is now. Hidden descendants are left out, as they are when composited;
    /// transaction groups and placeholders do not apply inside a flattened subtree.
    init(root: Layer) {
        let size = Size(width: root.frame.width, height: root.frame.height)
        bounds = size
        if let content = root.content {
            elements.append(Element(paint: .content(content, size: size), frame: Rect(size: size), opacity: 1))
        } else if let color = root.backgroundColor {
            elements.append(Element(paint: .color(color), frame: Rect(size: size), opacity: 1))
        }
        for child in root.childrenInDrawingOrder {
            add(child, mapping: .identity, opacity: 1)
        }
    }

    private mutating func add(_ layer: Layer, mapping parent: ScreenMapping, opacity parentOpacity: Double) {
        guard !layer.isHidden else { return }
        let opacity = parentOpacity * layer.opacity
        guard opacity > 0 else { return }
        let mapping = parent.appending(layer)
        let size = Size(width: layer.frame.width, height: layer.frame.height)
        let frame = mapping.rect(covering: size)
        if !frame.isEmpty {
            if layer.content != nil, !layer.isSurfaceless, layer.hasCurrentSurface, let surface = layer.renderedSurface {
                elements.append(Element(paint: .surface(surface), frame: frame, opacity: opacity))
            } else if let content = layer.content {
                elements.append(Element(paint: .content(content, size: size), frame: frame, opacity: opacity))
            } else if let color = layer.backgroundColor {
                elements.append(Element(paint: .color(color), frame: frame, opacity: opacity))
            }
        }
        for child in layer.childrenInDrawingOrder {
            add(child, mapping: mapping, opacity: opacity)
        }
    }

    /// Paints the elements into a fresh surface. Runs on a render worker.
    func render(size: Size, isCancelled: () -> Bool) throws -> LayerSurface {
        let surface = LayerSurface(size: size, isOpaque: isOpaque)
        for (index, element) in elements.enumerated() {
            if isCancelled() { break }
            switch element.paint {
            case .color(let color):
                SurfacePainter.fill(surface, rect: element.frame, color: color, opacity: element.opacity)
            case .surface(let source):
                SurfacePainter.draw(source, into: surface, frame: element.frame, opacity: element.opacity)
            case .content(let content, let contentSize):
                // The bottom element covering the whole surface at full opacity draws straight into it.
                if index == 0, element.frame == Rect(size: size), contentSize == size, element.opacity == 1 {
                    try content.draw(into: surface, isCancelled: isCancelled)
                    continue
                }
                guard contentSize.width > 0, contentSize.height > 0 else { continue }
                let layerSurface = LayerSurface(size: contentSize, isOpaque: content.isOpaque)
                try content.draw(into: layerSurface, isCancelled: isCancelled)
                SurfacePainter.draw(layerSurface, into: surface, frame: element.frame, opacity: element.opacity)
            }
        }
        return surface
    }
}
