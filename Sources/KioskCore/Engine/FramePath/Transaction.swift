/// The layers waiting for the next loop observers (YYTransaction): redraw and layout requests collected during an
/// iteration, each layer once, in the order first asked, and flushed by the layout and render observers before
/// the loop sleeps. Asking ten times in one iteration is one entry, so one render.
///
/// Layers are held weakly: a request never keeps a removed layer alive.
///
/// Lives on the main thread.
public final class Transaction {
    private var render = WeakLayerSet()
    private var layout = WeakLayerSet()

    public init() {}

    /// Layers asked to render since the render observer last ran.
    public var pendingRenderCount: Int { render.liveCount }

    /// Layers asked to lay out since the layout observer last ran.
    public var pendingLayoutCount: Int { layout.liveCount }

    public var isEmpty: Bool { pendingRenderCount == 0 && pendingLayoutCount == 0 }

    func requestRender(_ layer: Layer) { render.insert(layer) }

    func requestLayout(_ layer: Layer) { layout.insert(layer) }

    /// The live layers asked to render, in request order; the set is empty afterwards.
    func takeRenderRequests() -> [Layer] { render.takeAll() }

    /// The live layers asked to lay out, in request order; the set is empty afterwards.
    func takeLayoutRequests() -> [Layer] { layout.takeAll() }
}

/// An insertion-ordered set of layers held weakly. Lives on the main thread.
struct WeakLayerSet {
    private struct Entry {
        weak var layer: Layer?
    }

    private var entries: [Entry] = []
    private var indices: [ObjectIdentifier: Int] = [:]

    var liveCount: Int { entries.reduce(0) { $0 + ($1.layer == nil ? 0 : 1) } }

    mutating func insert(_ layer: Layer) {
        let id = ObjectIdentifier(layer)
        if let index = indices[id] {
            // The identifier of a freed layer can be reused by a new one; the entry then holds nil.
            if entries[index].layer === layer { return }
            entries[index].layer = nil
        }
        indices[id] = entries.count
        entries.append(Entry(layer: layer))
    }

    mutating func takeAll() -> [Layer] {
        defer {
            entries.removeAll(keepingCapacity: true)
            indices.removeAll(keepingCapacity: true)
        }
        return entries.compactMap(\.layer)
    }
}
