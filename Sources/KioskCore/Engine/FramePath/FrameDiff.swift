/// Flatten-and-diff for one frame, as a pure function: the layer tree flattened into `FrameDiff.Entry` values and
/// the record of the frame composed before go in; the items to compose, the damage, and the record for the next
/// frame come out. No engine, no loop, no compositor: every damage rule is testable with plain values.
///
/// Damage comes out as scene rectangles that may overlap (a rectangle inside another is dropped); the compositor
/// unions them in its pixman region, the one region type, so nothing here merges rectangles.
///
/// A value type; the layer engine calls it on the main thread.
public enum FrameDiff {
    /// One layer in a flattened frame: which layer (`id`), what the compositor draws for it, and the screen
    /// pixels it can touch.
    public struct Entry {
        public let id: ObjectIdentifier
        public let item: CompositeItem
        public let visible: Rect

        public init(id: ObjectIdentifier, item: CompositeItem, visible: Rect) {
            self.id = id; self.item = item; self.visible = visible
        }
    }

    /// The frame composed last, by layer: what `diff` compares the next frame with. Empty before the first frame.
    public struct Record {
        struct Placed {
            let index: Int
            let item: CompositeItem
            let visible: Rect
        }

        var layers: [ObjectIdentifier: Placed] = [:]

        public init() {}

        public var layerCount: Int { layers.count }
    }

    /// What one frame composes.
    public struct Output {
        /// The items, back to front.
        public let items: [CompositeItem]
        /// Where the screen changed: scene rectangles inside the screen, none empty and none inside another, possibly
        /// overlapping. Empty when nothing changed (nothing to compose).
        public let damage: [Rect]
        /// The frame just flattened, for the next `diff`.
        public let record: Record
    }

    /// Compares `entries` (back to front) with the previous frame. Whatever changed is damaged where it was and
    /// where it is; a layer that appeared or disappeared where it is or was. An item that kept its place but now
    /// comes before one it used to follow changed order: damaging it covers their overlap. `forcedDamage` is added
    /// as it is (a full redraw). Everything is clipped to `screen`.
    public static func diff(_ entries: [Entry], against previous: Record, forcedDamage: [Rect] = [], screen: Rect) -> Output {
        var damage: [Rect] = []
        func add(_ rect: Rect) {
            let clipped = rect.intersection(screen)
            guard !clipped.isEmpty, !damage.contains(where: { $0.encloses(clipped) }) else { return }
            damage.removeAll { clipped.encloses($0) }
            damage.append(clipped)
        }
        for rect in forcedDamage { add(rect) }
        var record = Record()
        record.layers.reserveCapacity(entries.count)
        var latestPreviousIndex = -1
        for (index, entry) in entries.enumerated() {
            if let before = previous.layers[entry.id] {
                if !before.item.looksTheSame(as: entry.item) {
                    add(before.visible)
                    add(entry.visible)
                } else if before.index < latestPreviousIndex {
                    add(entry.visible)
                }
                latestPreviousIndex = max(latestPreviousIndex, before.index)
            } else {
                add(entry.visible)
            }
            record.layers[entry.id] = Record.Placed(index: index, item: entry.item, visible: entry.visible)
        }
        for (id, before) in previous.layers where record.layers[id] == nil {
            add(before.visible)
        }
        return Output(items: entries.map(\.item), damage: damage, record: record)
    }
}
