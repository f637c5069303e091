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

    public init(source: Source, frame: Rect, opacity: Double = 1, clip: Rect? = nil, transform: AffineTransform? = nil) {
        self.source = source; self.frame = frame; self.opacity = opacity; self.clip = clip; self.transform = transform
    }

    /// The part of the screen the item may paint: `frame` cut by `clip`.
    public var visibleFrame: Rect { clip.map { frame.intersection($0) } ?? frame }
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
    /// hashed again), nil for a compositor that keeps none.
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
