/// Which layer is under a point: the layer tree searched as it is composited, topmost first. Main thread, with
/// the tree.
extension Layer {
    /// The topmost layer whose bounds contain the point (`x`, `y`), given in the coordinates of this layer's parent
    /// (for an engine's root layer: the screen's scene coordinates). Children are searched before their parent,
    /// front to back (highest `zPosition` first, then the last added), through each layer's frame and transform.
    /// A hidden layer, a fully transparent one (opacity 0, its own or inherited), one that is not hit-testable and
    /// a transaction group that has not shown its first batch are skipped with their subtrees, as the compositor leaves them out. A layer that
    /// clips to its bounds hides the parts of its subtree outside them. A layer is hit wherever its bounds are,
    /// painted or not, as a view is in UIKit. Nil when no layer is there.
    public func hitTest(x: Double, y: Double) -> Layer? {
        guard !isHidden, isHitTestable, opacity > 0, !(host?.isAwaitingFirstBatch(self) ?? false) else { return nil }
        guard let toLocal = ScreenMapping.identity.appending(self).transform.invertedIfPossible else { return nil }
        let local = toLocal.apply(x: x, y: y)
        let inside = local.x >= 0 && local.y >= 0 && local.x < Double(frame.width) && local.y < Double(frame.height)
        if clipsToBounds && !inside { return nil }
        for child in childrenInDrawingOrder.reversed() {
            if let hit = child.hitTest(x: local.x, y: local.y) { return hit }
        }
        return inside ? self : nil
    }

    /// The point (`x`, `y`) in the coordinates of the root of this layer's tree's parent, in this layer's own
    /// coordinates (its bounds span 0...width, 0...height); nil when a transform on the way squashes the plane.
    public func convertFromTreeRoot(x: Double, y: Double) -> (x: Double, y: Double)? {
        var chain: [Layer] = []
        var layer: Layer? = self
        while let current = layer {
            chain.append(current)
            layer = current.parent
        }
        var mapping = ScreenMapping.identity
        for current in chain.reversed() { mapping = mapping.appending(current) }
        return mapping.transform.invertedIfPossible?.apply(x: x, y: y)
    }

    /// This layer and its ancestors, innermost first.
    public var selfAndAncestors: [Layer] {
        var result: [Layer] = []
        var layer: Layer? = self
        while let current = layer {
            result.append(current)
            layer = current.parent
        }
        return result
    }
}
