/// A node of the layer tree: a rectangle in its parent's coordinates with content rendered off the main thread,
/// composited with its ancestors' transforms and opacity. The CALayer / YYAsyncLayer counterpart.
///
/// Lives on the main thread, with the tree and the `LayerEngine` that hosts it; nothing about a layer crosses to a
/// render worker except immutable values (its content, a size, a sentinel capture).
///
/// Two kinds of change:
/// - `setNeedsRender()` (and setting `content`, or resizing) asks for a new render. Requests coalesce until the
///   next display observer: asking ten times in one loop iteration renders once.
/// - Moving pixels without new ones (frame origin, `zPosition`, `opacity`, `transform`, `isHidden`, children)
///   only recomposites; the engine damages where the layer was and where it is now.
///
/// Callbacks get the layer as an argument so they need not capture it: a closure stored on a layer that captures
/// that layer strongly would keep it alive forever.
public final class Layer {
    /// For logs and tests; render jobs carry it as their label.
    public var name: String?

    /// Position and size in the parent's coordinates, in pixels. A new size renders again; a new origin does not.
    public var frame: Rect {
        didSet {
            guard frame != oldValue else { return }
            if frame.width != oldValue.width || frame.height != oldValue.height { setNeedsRender() }
            geometryChanged()
        }
    }

    /// Stacking order among siblings: higher is drawn later (on top); equal values keep insertion order.
    public var zPosition: Double = 0 {
        didSet { if zPosition != oldValue { geometryChanged() } }
    }

    /// 0...1, multiplied with the ancestors' opacity.
    public var opacity: Double = 1 {
        didSet {
            if opacity < 0 || opacity > 1 { opacity = min(max(opacity, 0), 1) }
            if opacity != oldValue { geometryChanged() }
        }
    }

    /// Scale and rotation about the centre, then translation; applies to the whole subtree. A rotated layer is
    /// composited turned (bilinearly filtered) and damages its bounding box.
    public var transform: LayerTransform = .identity {
        didSet { if transform != oldValue { geometryChanged() } }
    }

    /// A hidden layer and its subtree are not composited (they are still rendered, so showing them is instant).
    public var isHidden = false {
        didSet { if isHidden != oldValue { geometryChanged() } }
    }

    /// False leaves the layer and its subtree out of hit-testing while it is still drawn (the pointer's cursor,
    /// which is always under the pointer).
    public var isHitTestable = true

    /// Children (and the layer's own content) are cut to the layer's bounds, as with CALayer's `masksToBounds`. The
    /// bounds as they land on the screen: for a rotated layer, their axis-aligned bounding box.
    public var clipsToBounds = false {
        didSet { if clipsToBounds != oldValue { geometryChanged() } }
    }

    public private(set) var children: [Layer] = []
    public private(set) weak var parent: Layer?

    /// What the layer draws. Setting it asks for a render; until that render lands the previous one stays on
    /// screen (or the placeholder, before the first). Setting nil removes the rendered pixels at once. A plain fill
    /// (`LayerContent.compositesWithoutSurface`) is not rendered: the compositor draws it, so it shows from the
    /// next composition and the layer holds no surface.
    public var content: (any LayerContent)? {
        didSet {
            if content == nil {
                sentinel.invalidate()
                renderedSurface = nil
                needsRender = false
                paintChanged()
            } else {
                // A plain fill still goes through the display observer, with no render: `willRender`, its
                // transaction group and `didRender` see it as they see any content.
                setNeedsRender()
            }
        }
    }

    /// A solid fill composited when the layer has no content (and painted into the surface of a rasterized subtree).
    public var backgroundColor: Color? {
        didSet { if backgroundColor != oldValue { paintChanged() } }
    }

    /// Shown in place of the content until the first render lands (AsyncDisplayKit's placeholder).
    public var placeholderColor: Color? {
        didSet { if placeholderColor != oldValue, renderedSurface == nil { host?.setNeedsComposite() } }
    }

    /// False renders on the main thread, inside the display observer: for tiny layers and deterministic tests.
    public var displaysAsynchronously = true

    /// Under `RenderQueuePool.Strategy.priority`, higher renders first.
    public var drawingPriority = 0

    /// Flattens the subtree into this layer's surface, rendered on a worker: the descendants' contents and
    /// backgrounds are drawn at their offsets, and the descendants are not composited on their own. Any change in
    /// the subtree renders the whole surface again, so it suits subtrees that change together or rarely.
    public var rasterizesSubtree = false {
        didSet {
            guard rasterizesSubtree != oldValue else { return }
            if let outer = outermostRasterizingAncestor {
                outer.setNeedsRender()
            } else {
                setNeedsRender()
                if !rasterizesSubtree {
                    // The flattened surface shows the children too, which now composite on their own: those whose
                    // own render is still current show it at once, the others render again.
                    renderedSurface = nil
                    forEachDescendant { if !$0.hasCurrentSurface { $0.setNeedsRenderIfDrawable() } }
                }
            }
            host?.setNeedsComposite()
        }
    }

    /// At an opacity below 1 the subtree is composed as one image and blended at that opacity (CALayer's
    /// `allowsGroupOpacity`), so its overlapping layers do not show through one another; off, each layer is blended
    /// on its own at its combined opacity. A page fading in sets it. Costs no surface: the compositor composes the
    /// group a band of rows at a time.
    public var allowsGroupOpacity = false {
        didSet { if allowsGroupOpacity != oldValue, opacity < 1 { host?.setNeedsComposite() } }
    }

    /// Offers the layer to an overlay plane of the output (`LayerEngine.overlayPlanes`): a video, or a large static
    /// image marked `plane: true`. It goes on a plane only while upright, opaque as a layer (opacity 1), unclipped,
    /// inside the screen and overlapped by nothing; otherwise it is composited, and `stats` says why.
    public var prefersOverlayPlane = false {
        didSet { if prefersOverlayPlane != oldValue { host?.setNeedsComposite() } }
    }

    /// A transaction group (AsyncDisplayKit's `_ASAsyncTransactionGroup`): finished renders of this layer and its
    /// descendants are held until every render of the subtree that was dispatched has finished, and then shown in
    /// one frame. Until its first batch lands the subtree is not composited at all: a page never appears half
    /// drawn. Nested groups merge into the outermost one.
    public var holdsChildrenUntilReady = false {
        didSet { if holdsChildrenUntilReady != oldValue { host?.setNeedsComposite() } }
    }

    /// Increased by every `setNeedsRender()`; invalidated when the layer is freed or its content removed. A render
    /// whose capture was invalidated, or that is older than the render shown, is dropped.
    public let sentinel = Sentinel()

    /// Run by the layout observer after `setNeedsLayout()`, parents before children, before renders dispatch.
    public var layout: ((Layer) -> Void)?

    /// On the main thread, in the display observer, when the layer's display request is served and just before its
    /// render is dispatched; it may still set the content that render draws (YYAsyncLayer's `willRender`).
    public var willRender: ((Layer) -> Void)?

    /// On the main thread, when a render was applied (`finished` true) or dropped because it was overtaken or
    /// failed (`finished` false).
    public var didRender: ((Layer, _ finished: Bool) -> Void)?

    /// A render was asked for and not yet dispatched.
    public internal(set) var needsRender = false

    /// A layout was asked for and not yet run.
    public internal(set) var needsLayout = false

    /// The most recent render applied: what the compositor draws for this layer.
    public internal(set) var renderedSurface: LayerSurface?

    /// The engine whose tree this layer is in; nil while detached.
    weak var host: LayerEngine?

    /// Whether this group has shown a complete batch; until then its subtree is not composited.
    var groupHasLanded = false

    /// The engine's id of this layer's render in flight: at most one is. A request made meanwhile waits, with
    /// `needsRender` set, and is dispatched with the newest data when this render is back.
    var renderInFlight: UInt64?

    /// How long this layer's last few renders took (each measured on the worker that drew it): the render pool
    /// queues a layer whose recent renders all took longer than a frame after every other (`RenderJobQueue`).
    var recentRenderTimes = RecentRenderTimes()

    /// The sentinel generation of the render shown (`renderedSurface`): an older result arriving later is dropped.
    var shownGeneration: UInt64?

    /// Set on the root of a subtree whose surfaces were purged (`LayerEngine.purgeSurfaces`), until restored.
    var surfacesPurged = false

    public init(frame: Rect = Rect(x: 0, y: 0, width: 0, height: 0), content: (any LayerContent)? = nil, name: String? = nil) {
        self.frame = frame
        self.content = content
        self.name = name
        if content != nil { needsRender = true }
    }

    deinit {
        // Renders still in flight see the change through `isCancelled` and stop early (YYAsyncLayer does the same).
        sentinel.invalidate()
    }

    /// Whether the layer is in an engine's tree.
    public var isAttached: Bool { host != nil }

    // MARK: Tree

    /// Adds `child` on top of the existing children, removing it from its current parent first.
    public func addChild(_ child: Layer) {
        insertChild(child, at: children.count)
    }

    /// Inserts `child` at `index` of `children` (clamped), removing it from its current parent first.
    public func insertChild(_ child: Layer, at index: Int) {
        precondition(child !== self && !isDescendant(of: child), "Layer.insertChild: a layer cannot contain itself")
        child.removeFromParent()
        children.insert(child, at: min(max(index, 0), children.count))
        child.parent = self
        if let host { child.attach(to: host) }
        paintChanged()
    }

    /// Removes `child` if it is one of the children.
    public func removeChild(_ child: Layer) {
        guard child.parent === self else { return }
        child.removeFromParent()
    }

    /// Detaches the layer (and its subtree) from its parent and from the engine. Renders in flight for it are
    /// dropped if the layer is freed meanwhile, or applied to it, detached, if not.
    public func removeFromParent() {
        guard let parent else { return }
        parent.children.removeAll { $0 === self }
        self.parent = nil
        if let host {
            host.setNeedsComposite()
            detachFromHost()
        }
        parent.paintChanged()
    }

    /// Whether `ancestor` is this layer's parent, grandparent, and so on.
    public func isDescendant(of ancestor: Layer) -> Bool {
        var layer = parent
        while let current = layer {
            if current === ancestor { return true }
            layer = current.parent
        }
        return false
    }

    // MARK: Requests

    /// Asks for a new render at the next display observer, or, while a render is in flight, as soon as that one is
    /// back (which still shows). Inside a rasterized subtree the request goes to the rasterizing ancestor.
    public func setNeedsRender() {
        sentinel.increase()
        if let outer = outermostRasterizingAncestor {
            outer.setNeedsRender()
            return
        }
        needsRender = true
        host?.transaction.requestRender(self)
    }

    /// Asks for `layout` to run at the next layout observer.
    public func setNeedsLayout() {
        needsLayout = true
        host?.transaction.requestLayout(self)
    }

    // MARK: Engine support

    /// The outermost proper ancestor that rasterizes its subtree: where this layer's pixels end up.
    var outermostRasterizingAncestor: Layer? {
        var found: Layer?
        var layer = parent
        while let current = layer {
            if current.rasterizesSubtree { found = current }
            layer = current.parent
        }
        return found
    }

    /// The outermost layer, this one included, whose transaction group holds this layer's renders.
    var outermostHoldingGroup: Layer? {
        var found: Layer? = holdsChildrenUntilReady ? self : nil
        var layer = parent
        while let current = layer {
            if current.holdsChildrenUntilReady { found = current }
            layer = current.parent
        }
        return found
    }

    /// Distance from the root of its tree.
    var depth: Int {
        var depth = 0
        var layer = parent
        while let current = layer {
            depth += 1
            layer = current.parent
        }
        return depth
    }

    /// Whether `renderedSurface` shows the layer as it is now: its newest render at its size, nothing asked since.
    /// A layer inside a rasterized subtree keeps its own render, and a flattening copies it rather than drawing the
    /// content again (`RasterPlan`) as long as it is current.
    var hasCurrentSurface: Bool {
        guard let surface = renderedSurface, !needsRender, renderInFlight == nil,
              shownGeneration == sentinel.value else { return false }
        return surface.size == Size(width: frame.width, height: frame.height)
    }

    /// Whether a render would produce anything: content that needs a surface, or a subtree to flatten.
    var isDrawable: Bool { (content != nil && !isSurfaceless) || rasterizesSubtree }

    /// The layer's content is a plain fill the compositor draws itself (and the layer flattens no subtree): its
    /// display request is completed at once, with no render and no surface.
    var isSurfaceless: Bool { content?.compositesWithoutSurface == true && !rasterizesSubtree }

    /// Children back to front: by `zPosition`, then insertion order.
    var childrenInDrawingOrder: [Layer] {
        guard children.count > 1, children.contains(where: { $0.zPosition != children[0].zPosition }) else {
            return children
        }
        return children.enumerated()
            .sorted { $0.element.zPosition != $1.element.zPosition ? $0.element.zPosition < $1.element.zPosition : $0.offset < $1.offset }
            .map(\.element)
    }

    /// The pixels move (or disappear) without changing: recomposite, or re-render the rasterizing ancestor that
    /// holds them.
    private func geometryChanged() {
        if let outer = outermostRasterizingAncestor { outer.setNeedsRender() }
        host?.setNeedsComposite()
    }

    /// What this layer paints changed outside its content (background, children): recomposite, and re-render the
    /// surface it is painted into when that is a rasterized one.
    private func paintChanged() {
        if let outer = outermostRasterizingAncestor {
            outer.setNeedsRender()
        } else if rasterizesSubtree {
            setNeedsRender()
        }
        host?.setNeedsComposite()
    }

    private func setNeedsRenderIfDrawable() {
        if isDrawable { setNeedsRender() }
    }

    private func forEachDescendant(_ body: (Layer) -> Void) {
        for child in children {
            body(child)
            child.forEachDescendant(body)
        }
    }

    /// Joins `engine`'s tree with the subtree, handing it the requests made while detached.
    func attach(to engine: LayerEngine) {
        host = engine
        if needsRender { engine.transaction.requestRender(self) }
        if needsLayout { engine.transaction.requestLayout(self) }
        for child in children { child.attach(to: engine) }
        engine.setNeedsComposite()
    }

    private func detachFromHost() {
        host = nil
        for child in children { child.detachFromHost() }
    }
}
