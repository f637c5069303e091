/// One layer as the compositor draws it: resolved to screen (scene) coordinates, in back-to-front order. A plain
/// value built by the layer engine on the main thread.
public struct CompositeItem: Sendable {
    public enum Source: Sendable {
        /// A finished render, drawn at `frame` (scaled if the sizes differ).
        case surface(LayerSurface)
        /// A solid colour: a placeholder until a layer's first render lands, or a layer without content.
        case color(Color)
        /// A plain fill drawn straight into the shadow buffer (`LayerContent.compositesWithoutSurface`), at `frame`.
        case content(any LayerContent)
    }

    public var source: Source
    /// Where the layer lands on the screen, after its ancestors' translations, scales and rotations: for a rotated
    /// layer, the axis-aligned bounding box of what it covers (damage and clipping work on it).
    public var frame: Rect
    /// Combined opacity of the layer and its ancestors, 0...1.
    public var opacity: Double
    /// Drawing outside this rectangle (screen coordinates) is clipped away.
    public var clip: Rect?
    /// Set for a rotated (or mirrored) layer, which cannot be drawn fitted to `frame`: maps the unit square
    /// (0, 0)–(1, 1), standing for the layer's bounds whatever size its surface has, to screen coordinates. The
    /// compositor paints through it with bilinear filtering, and such an item never counts as opaquely covering
    /// anything. Nil for upright layers.
    public var transform: AffineTransform?
    /// Set for the layers of a subtree that fades as a whole (`Layer.allowsGroupOpacity`): the group's items are
    /// composed together first, then blended at the group's opacity, and `opacity` is the item's own within the
    /// group. Nil for items composed one by one.
    public var group: OpacityGroup?

    public init(source: Source, frame: Rect, opacity: Double = 1, clip: Rect? = nil, transform: AffineTransform? = nil,
                group: OpacityGroup? = nil) {
        self.source = source; self.frame = frame; self.opacity = opacity; self.clip = clip; self.transform = transform
        self.group = group
    }

    /// The part of the screen the item may paint: `frame` cut by `clip`.
    public var visibleFrame: Rect { clip.map { frame.intersection($0) } ?? frame }

    /// Whether the two items put the same pixels in the same place (the same surface, fill or content, frame,
    /// opacity, clip, transform and group).
    public func looksTheSame(as other: CompositeItem) -> Bool {
        guard frame == other.frame, opacity == other.opacity, clip == other.clip, transform == other.transform,
              group == other.group else { return false }
        switch (source, other.source) {
        case (.surface(let x), .surface(let y)): return x === y
        case (.color(let x), .color(let y)): return x == y
        case (.content(let x), .content(let y)): return x.isSameValue(as: y)
        default: return false
        }
    }

    /// The opacity the item shows with: its own times its group's.
    public var shownOpacity: Double { opacity * (group?.opacity ?? 1) }
}

/// A subtree composed as one image and blended at `opacity` (CALayer's `allowsGroupOpacity`): a page fading in over
/// another shows the page as it looks, where fading each layer on its own would let its overlapping layers show
/// through one another. The items of one group are consecutive in a frame. A plain value.
public struct OpacityGroup: Sendable, Equatable {
    /// The layer whose subtree the group is.
    public let id: ObjectIdentifier
    /// 0 < opacity < 1: a group at 1 is composed item by item, as it looks the same.
    public let opacity: Double

    public init(id: ObjectIdentifier, opacity: Double) {
        self.id = id; self.opacity = opacity
    }
}

/// Composes layers into a shadow buffer in cached RAM and copies damage into scanout buffers. Lives on the main
/// thread (the commit observer calls it).
///
/// Rules (why it exists): compose only damaged rectangles; never read or blend in a scanout buffer (on a Pi those
/// are write-combined and reads are very slow); copy into a scanout buffer the damage accumulated for that buffer
/// since it was last written — this frame's damage plus what changed while it was on screen or queued.
///
/// Two coordinate spaces: items and damage are in scene coordinates (`sceneSize`, what layers are laid out in);
/// the shadow buffer, scanout buffers, copied rectangles and snapshots are in the panel's (`size`). They differ
/// when `rotation` is not 0.
public protocol Compositing: AnyObject {
    /// The size of the shadow buffer (the output's mode size).
    var size: Size { get }
    /// The size layers are laid out in: `size` with width and height swapped when `rotation` is 90 or 270.
    var sceneSize: Size { get }
    /// How the scene is turned onto the panel.
    var rotation: OutputRotation { get }
    /// Recompose `damage` (scene rectangles, may overlap) from `items`, back to front. Pixels outside the damage
    /// keep their previous content. Returns the damage actually recomposed, in panel coordinates, clipped to the
    /// panel.
    @discardableResult
    func compose(_ items: [CompositeItem], damage: [Rect]) -> [Rect]
    /// Copy into `buffer` everything that changed since that buffer last received a copy (or everything, the first
    /// time a buffer index is seen, or after `invalidateBuffers`). Write-only on `buffer`. Returns the rectangles
    /// copied (for FB_DAMAGE_CLIPS) and the number of bytes written.
    func copy(into buffer: PixelBuffer) -> (rects: [Rect], bytes: Int)
    /// Forget what every scanout buffer holds (after a modeset, or when buffers were reallocated).
    func invalidateBuffers()
    /// A copy of the shadow buffer (XRGB8888, stride = width * 4, panel coordinates): what the next copy will put
    /// on screen.
    func snapshot() -> [UInt8]
    /// The fingerprint of the newest composition (`TileFingerprints`: only the tiles a composition touched are
    /// hashed again), nil for a compositor that keeps none. A frame written straight into the scanout buffer is
    /// hashed as it is written, so it is cheapest read after `copy(into:)`; read before, it is computed then.
    var fingerprint: FrameFingerprint? { get }
    /// Tiles hashed for fingerprints so far (an unchanged frame hashes none); 0 without fingerprints.
    var tilesHashed: Int { get }
}

extension Compositing {
    /// An unrotated compositor.
    public var rotation: OutputRotation { .degrees0 }
    public var sceneSize: Size { rotation.sceneSize(forPanel: size) }
    /// A compositor without fingerprints.
    public var fingerprint: FrameFingerprint? { nil }
    public var tilesHashed: Int { 0 }
}
