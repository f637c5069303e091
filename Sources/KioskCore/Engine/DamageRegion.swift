/// The screen rectangles that changed in one frame, clipped to the screen. Rectangles inside another are dropped;
/// overlapping ones are kept (the compositor accepts overlaps), and a long list collapses to its bounding box, since
/// past a few dozen rectangles one larger copy is cheaper than many small ones. A plain value on the main thread.
struct DamageRegion {
    let bounds: Rect
    private(set) var rects: [Rect] = []

    /// Past this many rectangles the region becomes its bounding box.
    static let maximumRects = 32

    init(bounds: Rect) { self.bounds = bounds }

    var isEmpty: Bool { rects.isEmpty }

    mutating func add(_ rect: Rect) {
        let clipped = rect.intersection(bounds)
        guard !clipped.isEmpty else { return }
        if rects.contains(where: { enclosing($0, clipped) }) { return }
        rects.removeAll { enclosing(clipped, $0) }
        rects.append(clipped)
        if rects.count > Self.maximumRects {
            rects = [rects.dropFirst().reduce(rects[0], boundingRect)]
        }
    }
}

/// Whether `outer` contains all of `inner`. Free functions rather than `Rect` members, so a later addition to
/// `Rect` cannot collide with them.
private func enclosing(_ outer: Rect, _ inner: Rect) -> Bool {
    inner.x >= outer.x && inner.y >= outer.y && inner.maxX <= outer.maxX && inner.maxY <= outer.maxY
}

/// The smallest rectangle containing both.
private func boundingRect(_ a: Rect, _ b: Rect) -> Rect {
    if a.isEmpty { return b }
    if b.isEmpty { return a }
    let minX = min(a.x, b.x), minY = min(a.y, b.y)
    return Rect(x: minX, y: minY, width: max(a.maxX, b.maxX) - minX, height: max(a.maxY, b.maxY) - minY)
}
