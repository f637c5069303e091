import Logging

private let logger = Logger(label: "kioskd.surfaces")

/// What layer surfaces hold, as `stats` reports it: the total, per range root (a page), the largest layers, and
/// how often surfaces were purged and rendered again. A plain value.
public struct SurfaceStatistics: Codable, Sendable, Equatable {
    public struct LayerBytes: Codable, Sendable, Equatable {
        public var layer: String
        public var bytes: Int
    }

    public var totalBytes = 0
    /// `memory.surface_budget_mb` in bytes; nil without a budget.
    public var budgetBytes: Int?
    /// Bytes held under each registered range root, by its name.
    public var byRoot: [String: Int] = [:]
    /// The five largest surfaces.
    public var largest: [LayerBytes] = []
    /// Surfaces dropped (a subtree left its range, or the budget was exceeded), and their bytes.
    public var purges = 0
    public var purgedBytes = 0
    /// Subtrees purged because the budget was exceeded.
    public var budgetPurges = 0
    /// Layers rendered again after a purge.
    public var rerenders = 0
    /// Bytes held by the shared surface caches (decoded images) beyond what layers show: the images of purged
    /// pages, kept for when they come back. The budget counts them with `totalBytes`.
    public var cachedBytes = 0
    /// Cached surfaces dropped because the budget was exceeded, and their bytes.
    public var cacheEvictions = 0
    public var cacheEvictedBytes = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case totalBytes = "total_bytes", budgetBytes = "budget_bytes", byRoot = "by_page", largest, purges
        case purgedBytes = "purged_bytes", budgetPurges = "budget_purges", rerenders
        case cachedBytes = "cached_bytes", cacheEvictions = "cache_evictions", cacheEvictedBytes = "cache_evicted_bytes"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(totalBytes, forKey: .totalBytes)
        try c.encode(budgetBytes, forKey: .budgetBytes)
        try c.encode(byRoot, forKey: .byRoot)
        try c.encode(largest, forKey: .largest)
        try c.encode(purges, forKey: .purges)
        try c.encode(purgedBytes, forKey: .purgedBytes)
        try c.encode(budgetPurges, forKey: .budgetPurges)
        try c.encode(rerenders, forKey: .rerenders)
        try c.encode(cachedBytes, forKey: .cachedBytes)
        try c.encode(cacheEvictions, forKey: .cacheEvictions)
        try c.encode(cacheEvictedBytes, forKey: .cacheEvictedBytes)
    }
}

/// A cache of surfaces that layers share (KioskRender's decoded images). What it holds that no layer shows any
/// more (a purged page's images) is memory the surface budget answers for: the budget counts it and, when over,
/// evicts it before it purges any page. Called on the main thread; the cache is shared with render workers.
public protocol SharedSurfaceCache: AnyObject, Sendable {
    /// The bytes of the surfaces nothing but the cache holds: no layer shows them and no render is using them.
    var unsharedBytes: Int { get }
    /// Drops surfaces nothing but the cache holds, least recently used first, until `bytes` are dropped or none
    /// is left. Returns them: the caller holds the last references and frees them.
    func evictUnshared(bytes: Int) -> [LayerSurface]
}

/// The engine's record of purgeable subtrees (range roots: a scene's pages), when each was last on screen, and the
/// budget. Main thread, owned by the engine.
final class SurfaceBookkeeping {
    struct Root {
        weak var layer: Layer?
        var name: String
        /// The commit turn it was last seen on screen: the least recently shown is purged first.
        var lastShown: UInt64
    }

    var roots: [ObjectIdentifier: Root] = [:]
    var budgetBytes: Int?
    var turn: UInt64 = 0
    var counters = SurfaceStatistics()
    /// Over budget with nothing left to purge: said once, until the total is under the budget again.
    var warnedOverBudget = false
    /// From a page change to a purged (or still rendering) page until it was shown whole.
    var pageReady = LatencyRecorder(precision: .coarse)
    /// Caches whose surfaces the budget also answers for (`LayerEngine.sharedSurfaceCaches`).
    var caches: [any SharedSurfaceCache] = []
}

/// Purging and restoring the surfaces of subtrees that are not on screen (AsyncDisplayKit's display and preload
/// ranges, applied to pages), the surface budget, and releasing purged surfaces on a render worker so freeing
/// megabytes never holds up a flip. Main thread, like the engine.
///
/// A purged subtree keeps its layers and contents but no pixels; render requests inside it wait (the newest data
/// is drawn when it comes back) and renders that were in flight are dropped. `restoreSurfaces` renders it again;
/// `isRendering` then says when it is complete, so its owner can show it whole.
extension LayerEngine {
    /// Registers `layer` as a subtree the budget may purge, under `name` in the statistics (a page).
    public func registerRangeRoot(_ layer: Layer, name: String) {
        surfaces.roots[ObjectIdentifier(layer)] = SurfaceBookkeeping.Root(layer: layer, name: name, lastShown: surfaces.turn)
    }

    /// `memory.surface_budget_mb`, in bytes; nil for none.
    public var surfaceBudgetBytes: Int? {
        get { surfaces.budgetBytes }
        set {
            surfaces.budgetBytes = newValue
            surfaces.counters.budgetBytes = newValue
        }
    }

    /// Caches of surfaces that layers share (decoded images): the budget counts what they hold beyond the layers'
    /// surfaces and evicts it first. A scene stage adds the decoded-image cache.
    public var sharedSurfaceCaches: [any SharedSurfaceCache] {
        get { surfaces.caches }
        set { surfaces.caches = newValue }
    }

    /// Whether `layer` is composited: attached to this engine and neither it nor an ancestor hidden.
    public func isOnScreen(_ layer: Layer) -> Bool {
        guard layer.host === self else { return false }
        var current: Layer? = layer
        while let l = current {
            if l.isHidden { return false }
            current = l.parent
        }
        return true
    }

    /// Records how long a page change waited for its page to be rendered: `page_ready_ms` in `stats`.
    public func recordPageReady(_ waited: Duration) {
        surfaces.pageReady.record(waited)
    }

    /// Whether `subtree` was purged and not restored since.
    public func isPurged(_ subtree: Layer) -> Bool { subtree.surfacesPurged }

    /// Drops every surface in `subtree` and hands them to a render worker to free. Refused (false) while the
    /// subtree is on screen: what is shown is never purged.
    @discardableResult
    public func purgeSurfaces(of subtree: Layer) -> Bool {
        guard !isOnScreen(subtree) else { return false }
        subtree.surfacesPurged = true
        var dropped: [LayerSurface] = []
        func visit(_ layer: Layer) {
            if let surface = layer.renderedSurface {
                dropped.append(surface)
                layer.renderedSurface = nil
                layer.shownGeneration = nil
            }
            for child in layer.children { visit(child) }
        }
        visit(subtree)
        surfaces.counters.purges += 1
        let bytes = dropped.reduce(0) { $0 + $1.byteCount }
        surfaces.counters.purgedBytes += bytes
        logger.debug("\(subtree.name ?? "subtree"): purged \(dropped.count) surface(s), \(bytes) bytes")
        release(&dropped)
        return true
    }

    /// Renders a purged subtree again: every drawable layer in it is asked to render (a layer with a newer request
    /// waiting draws that). `isRendering(subtree)` is true until all of them are back.
    public func restoreSurfaces(of subtree: Layer) {
        guard subtree.surfacesPurged else { return }
        subtree.surfacesPurged = false
        var rerenders = 0
        func visit(_ layer: Layer) {
            if layer.isDrawable, layer.outermostRasterizingAncestor == nil, layer.renderedSurface == nil || layer.needsRender {
                layer.setNeedsRender()
                rerenders += 1
            } else if layer.isSurfaceless, layer.needsRender {
                // Its display was asked for while purged: completed now, with no render.
                layer.setNeedsRender()
            }
            for child in layer.children { visit(child) }
        }
        visit(subtree)
        surfaces.counters.rerenders += rerenders
    }

    /// What surfaces hold now, and the purge counters.
    public var surfaceStatistics: SurfaceStatistics {
        var statistics = surfaces.counters
        var all: [SurfaceStatistics.LayerBytes] = []
        // A surface shared by several layers (the same decoded image) is counted once, where it is met first.
        var seen: Set<ObjectIdentifier> = []
        func visit(_ layer: Layer, _ root: String?) {
            let root = root ?? surfaces.roots[ObjectIdentifier(layer)].flatMap { $0.layer === layer ? $0.name : nil }
            if let surface = layer.renderedSurface, seen.insert(ObjectIdentifier(surface)).inserted {
                all.append(.init(layer: layer.name ?? "layer", bytes: surface.byteCount))
                if let root { statistics.byRoot[root, default: 0] += surface.byteCount }
            }
            for child in layer.children { visit(child, root) }
        }
        visit(rootLayer, nil)
        statistics.totalBytes = all.reduce(0) { $0 + $1.bytes }
        statistics.cachedBytes = cachedOnlyBytes
        statistics.largest = Array(all.sorted { $0.bytes > $1.bytes }.prefix(5))
        return statistics
    }

    /// From the commit observer, after renders were received: notes which range roots are on screen, and over the
    /// budget purges the others, least recently shown first, until the total fits or none is left.
    func enforceSurfaceBudget() {
        surfaces.turn += 1
        for (id, root) in surfaces.roots {
            guard let layer = root.layer else { surfaces.roots[id] = nil; continue }
            if isOnScreen(layer) { surfaces.roots[id]?.lastShown = surfaces.turn }
        }
        guard let budget = surfaces.budgetBytes else { return }
        var total = bytesHeld(under: rootLayer) + cachedOnlyBytes
        guard total > budget else {
            surfaces.warnedOverBudget = false
            return
        }
        // What only a cache holds goes first: it is on no page, and costs a decode when its page comes back.
        total = evictCached(total: total, budget: budget)
        let candidates = surfaces.roots.values
            .compactMap { root in root.layer.map { (layer: $0, lastShown: root.lastShown, name: root.name) } }
            .filter { !$0.layer.surfacesPurged && $0.layer.host === self && !isOnScreen($0.layer) }
            .sorted { $0.lastShown < $1.lastShown }
        for candidate in candidates where total > budget {
            let bytes = bytesHeld(under: candidate.layer)
            guard bytes > 0, purgeSurfaces(of: candidate.layer) else { continue }
            surfaces.counters.budgetPurges += 1
            logger.info("surfaces over the budget of \(budget) bytes: purged \(candidate.name) (\(bytes) bytes)")
            // Its images may live on in a cache. Until the release job has run they are not the cache's alone; they
            // count from the next turn, and are evicted then if the total is still over.
            total -= bytes
        }
        if total > budget, !surfaces.warnedOverBudget {
            surfaces.warnedOverBudget = true
            logger.warning("surfaces hold \(total) bytes, over the budget of \(budget), and all of it is on screen or wanted next")
        }
    }

    /// The bytes the shared caches hold beyond the layers' surfaces.
    private var cachedOnlyBytes: Int {
        surfaces.caches.reduce(0) { $0 + $1.unsharedBytes }
    }

    /// Evicts what only a shared cache holds until `total` fits `budget` or nothing such is left, and frees it on a
    /// render worker. Returns the new total.
    private func evictCached(total: Int, budget: Int) -> Int {
        var total = total
        for cache in surfaces.caches where total > budget {
            var dropped = cache.evictUnshared(bytes: total - budget)
            guard !dropped.isEmpty else { continue }
            let bytes = dropped.reduce(0) { $0 + $1.byteCount }
            surfaces.counters.cacheEvictions += dropped.count
            surfaces.counters.cacheEvictedBytes += bytes
            total -= bytes
            logger.info("surfaces over the budget of \(budget) bytes: dropped \(dropped.count) cached image(s) no page shows (\(bytes) bytes)")
            release(&dropped)
        }
        return total
    }

    /// The bytes of the surfaces in `layer`'s subtree, each surface once (layers showing the same decoded image
    /// share one).
    private func bytesHeld(under layer: Layer) -> Int {
        var seen: Set<ObjectIdentifier> = []
        var bytes = 0
        func visit(_ layer: Layer) {
            if let surface = layer.renderedSurface, seen.insert(ObjectIdentifier(surface)).inserted { bytes += surface.byteCount }
            for child in layer.children { visit(child) }
        }
        visit(layer)
        return bytes
    }

    /// Frees `dropped` on a render worker: the batch takes the only references, and empties itself there.
    private func release(_ dropped: inout [LayerSurface]) {
        guard !dropped.isEmpty else { return }
        let batch = SurfaceReleaseBatch(dropped)
        dropped.removeAll()
        pool.submit(RenderJobInfo(label: "release \(batch.count) surface(s)", kind: "release", priority: -1000)) {
            batch.free()
        }
    }
}

/// Purged surfaces on their way to a render worker, which frees them. Filled on the main thread and handed over
/// through the pool's queue (the lock publishes it), then touched only by the worker that runs the job: hence
/// `@unchecked Sendable`.
final class SurfaceReleaseBatch: @unchecked Sendable {
    private var surfaces: [LayerSurface]
    let count: Int

    init(_ surfaces: [LayerSurface]) {
        self.surfaces = surfaces
        count = surfaces.count
    }

    /// On the worker: drops the last references, so the memory is freed on this thread.
    func free() { surfaces.removeAll() }
}

extension Layer {
    /// Inside a purged subtree: renders wait until it is restored.
    var isInPurgedSubtree: Bool {
        var current: Layer? = self
        while let layer = current {
            if layer.surfacesPurged { return true }
            current = layer.parent
        }
        return false
    }
}
