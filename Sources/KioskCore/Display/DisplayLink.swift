/// One display-link tick: the vblank that just showed a frame, and the vblank the next frame can reach.
public struct DisplayTick: Sendable {
    public var event: FlipEvent
    /// The expected time of the next vblank (event time + one refresh period).
    public var nextVblank: MonotonicInstant
}

/// The CADisplayLink counterpart: ticks on page-flip events of a real CRTC, only while it has something to do.
/// Targets are held weakly (the YYWeakProxy rule), so a display link never keeps a removed layer alive.
/// Lives on the main thread.
public final class DisplayLink {
    private struct Entry {
        weak var target: AnyObject?
        let handler: (AnyObject, DisplayTick) -> Void
        let id: Int
    }

    private var entries: [Entry] = []
    private var nextID = 0
    /// The refresh period of the output it ticks for; set again when another output is attached.
    public var frameDuration: Duration
    /// Ticks delivered so far.
    public private(set) var ticks = 0

    public init(frameDuration: Duration) { self.frameDuration = frameDuration }

    /// Calls `handler` with the target on every tick while the target lives. Returns a token for `remove`.
    @discardableResult
    public func add<T: AnyObject>(target: T, _ handler: @escaping (T, DisplayTick) -> Void) -> Int {
        nextID += 1
        entries.append(Entry(target: target, handler: { handler($0 as! T, $1) }, id: nextID))
        return nextID
    }

    public func remove(_ token: Int) { entries.removeAll { $0.id == token } }

    /// True while some target is alive: the owner keeps flipping only then.
    public var isActive: Bool {
        entries.removeAll { $0.target == nil }
        return !entries.isEmpty
    }

    /// Feed a flip event in; every live target gets a tick, dead ones are dropped.
    public func flipCompleted(_ event: FlipEvent) {
        entries.removeAll { $0.target == nil }
        guard !entries.isEmpty else { return }
        ticks += 1
        let tick = DisplayTick(event: event, nextVblank: event.timestamp + frameDuration)
        for entry in entries {
            if let target = entry.target { entry.handler(target, tick) }
        }
    }
}
