import KioskCore
import KioskRender

/// Not product code: part of what `kioskd bench` measures against.
///
/// One thing a hand-written kiosk draws each frame: a widget's content (or a solid background) at a screen
/// rectangle, with its opacity, clipped like the engine clips it. A plain value; any thread.
public struct SceneItem: Sendable {
    public var content: any LayerContent
    public var frame: Rect
    public var opacity: Double
    /// The intersection of the clipping ancestors' frames; nil when no ancestor clips.
    public var clip: Rect?

    public init(content: any LayerContent, frame: Rect, opacity: Double = 1, clip: Rect? = nil) {
        self.content = content
        self.frame = frame
        self.opacity = opacity
        self.clip = clip
    }
}

/// Lists what a layer tree shows, back to front, through its public properties only: the walk a hand-written
/// kiosk's draw loop makes over its widgets. Positions follow frames and translations; scale and rotation are
/// left out (a page slide and a ticker only translate). Main thread (it reads the live tree).
public enum SceneItems {
    public static func list(_ root: Layer) -> [SceneItem] {
        var items: [SceneItem] = []
        visit(root, x: 0, y: 0, opacity: 1, clip: nil, into: &items)
        return items
    }

    private static func visit(_ layer: Layer, x: Int, y: Int, opacity parentOpacity: Double, clip: Rect?,
                              into items: inout [SceneItem]) {
        let opacity = parentOpacity * layer.opacity
        guard !layer.isHidden, opacity > 0 else { return }
        let ox = x + layer.frame.x + Int(layer.transform.translateX.rounded())
        let oy = y + layer.frame.y + Int(layer.transform.translateY.rounded())
        let frame = Rect(x: ox, y: oy, width: layer.frame.width, height: layer.frame.height)
        if !frame.isEmpty {
            if let content = layer.content {
                items.append(SceneItem(content: content, frame: frame, opacity: opacity, clip: clip))
            } else if let color = layer.backgroundColor, color.alpha > 0 {
                items.append(SceneItem(content: RectContent(color: color), frame: frame, opacity: opacity, clip: clip))
            }
        }
        var childClip = clip
        if layer.clipsToBounds { childClip = clip.map { $0.intersection(frame) } ?? frame }
        if let childClip, childClip.isEmpty { return }
        // Drawing order: by zPosition, then insertion order (a stable sort keeps the latter).
        let children = layer.children.enumerated().sorted {
            ($0.element.zPosition, $0.offset) < ($1.element.zPosition, $1.offset)
        }
        for (_, child) in children { visit(child, x: ox, y: oy, opacity: opacity, clip: childClip, into: &items) }
    }
}
