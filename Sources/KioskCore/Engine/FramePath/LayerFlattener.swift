/// Flattens a layer tree into the back-to-front list of `FrameDiff.Entry` values the compositor draws: a layer,
/// then its children by `zPosition` and insertion order, through the ancestors' frames, transforms, opacity and
/// clipping. Hidden subtrees, subtrees clipped away entirely, and groups `isHeld` says have not shown a complete
/// batch yet, are left out; a rasterized subtree is its root's item alone once its flattened surface has landed
/// (until then its layers composite one by one). A layer that `allowsGroupOpacity` at an opacity below 1 makes its
/// subtree's items one `OpacityGroup` (the outermost such layer: a group inside a group folds its opacity into its
/// items).
///
/// Reads the tree and nothing else (no engine state), so it runs on the main thread, where the tree lives.
public enum LayerFlattener {
    /// - Parameters:
    ///   - screen: the scene rectangle; each entry's `visible` is cut to it.
    ///   - isHeld: whether a layer is a transaction group still waiting for its first complete batch.
    public static func flatten(_ root: Layer, screen: Rect, isHeld: (Layer) -> Bool = { _ in false }) -> [FrameDiff.Entry] {
        var entries: [FrameDiff.Entry] = []
        collect(root, mapping: .identity, opacity: 1, group: nil, clip: nil, screen: screen, isHeld: isHeld, into: &entries)
        return entries
    }

    /// `clip` is the intersection of the clipping ancestors' frames on the screen (for a rotated clipping layer,
    /// its bounding box), nil when no ancestor clips. Inside a `group`, `parentOpacity` is relative to the group's.
    private static func collect(_ layer: Layer, mapping parent: ScreenMapping, opacity parentOpacity: Double,
                                group parentGroup: OpacityGroup?, clip: Rect?, screen: Rect, isHeld: (Layer) -> Bool,
                                into entries: inout [FrameDiff.Entry]) {
        guard !layer.isHidden, !isHeld(layer) else { return }
        var opacity = parentOpacity * layer.opacity
        guard opacity > 0 else { return }
        var group = parentGroup
        if group == nil, layer.allowsGroupOpacity, opacity < 1 {
            group = OpacityGroup(id: ObjectIdentifier(layer), opacity: opacity)
            opacity = 1
        }
        let mapping = parent.appending(layer)
        let size = Size(width: layer.frame.width, height: layer.frame.height)
        let frame = mapping.rect(covering: size)
        if !frame.isEmpty, let source = compositeSource(of: layer) {
            // A clip that cuts nothing is left off, so a clipping ancestor that moves around a child it fully shows
            // does not make the child look changed.
            let itemClip = clip.flatMap { $0.encloses(frame) ? nil : $0 }
            let item = CompositeItem(source: source, frame: frame, opacity: opacity, clip: itemClip,
                                     transform: mapping.isUpright ? nil : mapping.unitSquareTransform(for: size), group: group)
            entries.append(FrameDiff.Entry(id: ObjectIdentifier(layer), item: item, visible: item.visibleFrame.intersection(screen)))
        }
        // Until its flattened surface lands, a rasterizing layer's subtree composites as it did before.
        guard !layer.rasterizesSubtree || layer.renderedSurface == nil else { return }
        var childClip = clip
        if layer.clipsToBounds {
            childClip = clip.map { $0.intersection(frame) } ?? frame
        }
        if let childClip, childClip.isEmpty { return }
        for child in layer.childrenInDrawingOrder {
            collect(child, mapping: mapping, opacity: opacity, group: group, clip: childClip, screen: screen, isHeld: isHeld,
                    into: &entries)
        }
    }

    private static func compositeSource(of layer: Layer) -> CompositeItem.Source? {
        let color: Color?
        if layer.isSurfaceless, let content = layer.content {
            // A surface shown on it from outside (a video frame over its placeholder fill) wins, as over a render.
            if let surface = layer.renderedSurface { return .surface(surface) }
            return .content(content)
        } else if layer.isDrawable {
            if let surface = layer.renderedSurface { return .surface(surface) }
            // A subtree not flattened yet shows its root's own fill, as it did before it rasterized.
            color = layer.rasterizesSubtree && layer.content == nil ? layer.backgroundColor : layer.placeholderColor
        } else {
            color = layer.backgroundColor
        }
        guard let color, color.alpha > 0 else { return nil }
        return .color(color)
    }
}
