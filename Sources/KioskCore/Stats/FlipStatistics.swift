/// Counts flips and the vblanks between them. A value type owned by whoever receives flip events (main thread).
public struct FlipStatistics: Sendable {
    public private(set) var framesFlipped = 0
    /// Sum over consecutive flip events of (Δsequence − 1): vblanks at which no new frame was shown although one
    /// was expected, because the previous flip had completed and the next arrived late.
    public private(set) var missedVblanks: UInt64 = 0
    public private(set) var intervals = LatencyRecorder()
    public private(set) var first: FlipEvent?
    public private(set) var last: FlipEvent?

    public init() {}

    public mutating func record(_ event: FlipEvent) {
        framesFlipped += 1
        if let last {
            if event.sequence > last.sequence { missedVblanks += event.sequence - last.sequence - 1 }
            intervals.record(event.timestamp - last.timestamp)
        } else {
            first = event
        }
        last = event
    }

    /// Frames per second over everything recorded (flips after the first over the time they spanned).
    public var averageFPS: Double {
        guard let first, let last, framesFlipped > 1, last.timestamp > first.timestamp else { return 0 }
        return Double(framesFlipped - 1) / ((last.timestamp - first.timestamp).milliseconds / 1000)
    }
}
