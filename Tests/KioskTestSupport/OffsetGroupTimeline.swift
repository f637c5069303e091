import KioskCore

/// A sync group's time as a member reads it, for tests: the member's clock moved by `offset` nanoseconds and, with
/// `ppm`, running that many parts per million fast (negative: slow); or unknown while `known` is false (a member
/// joining). Main thread, as a stage's timeline.
public final class OffsetGroupTimeline: GroupTimeline {
    public var offset: Int64
    public var ppm: Double
    public var known = true

    public init(offset: Int64, ppm: Double = 0) {
        self.offset = offset
        self.ppm = ppm
    }

    public func groupTime(at local: MonotonicInstant) -> Int64? {
        guard known else { return nil }
        let l = Int64(local.nanoseconds)
        return offset + l + (ppm == 0 ? 0 : Int64((Double(l) * ppm / 1e6).rounded()))
    }
}
