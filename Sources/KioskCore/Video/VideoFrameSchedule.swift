/// Decoded frames waiting for their vblank. The decoder hands frames over a little before they are due, each with
/// its due time on the display's clock (`VideoFrame.due`); at each display-link tick the newest frame whose time has
/// come by the vblank the next present reaches (due no later than half a refresh after it: the vblank nearest its
/// time) is taken to be shown, and the older ones waiting are dropped, superseded before any vblank could show
/// them. A frame with no due time (one prerolled by a paused seek) is shown at once and supersedes every frame
/// waiting.
///
/// A value owned by one video widget; main thread.
public struct VideoFrameSchedule {
    /// Frames in the order they came.
    public private(set) var waiting: [VideoFrame] = []

    public init() {}

    public var isEmpty: Bool { waiting.isEmpty }

    /// At most this many frames wait (a decoder's lead holds two or three): more means no vblank has come for a
    /// while (the output is gone or dark), and the oldest are dropped rather than piling up.
    public static let capacity = 8

    /// Queues a frame with a due time; returns how many of the oldest were dropped to stay within `capacity`.
    public mutating func add(_ frame: VideoFrame) -> Int {
        waiting.append(frame)
        let excess = max(waiting.count - Self.capacity, 0)
        waiting.removeFirst(excess)
        return excess
    }

    /// The frame to hand to the compositor now for the vblank at `vblank` (refresh `period`), and how many waiting
    /// frames it superseded. Nil when no waiting frame is due by then; frames due later stay.
    public mutating func take(forVblankAt vblank: MonotonicInstant, period: Duration) -> (frame: VideoFrame?, superseded: Int) {
        let limit = vblank + period / 2
        guard let index = waiting.lastIndex(where: { ($0.due ?? vblank) <= limit }) else { return (nil, 0) }
        let frame = waiting[index]
        waiting.removeFirst(index + 1)
        return (frame, index)
    }

    /// Empties the schedule; returns how many frames were waiting.
    public mutating func removeAll() -> Int {
        defer { waiting.removeAll() }
        return waiting.count
    }
}
