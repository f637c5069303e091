#if canImport(Glibc)
import Glibc
#endif

/// A point on CLOCK_MONOTONIC, in nanoseconds: the clock DRM stamps vblank events with, so loop timers and
/// flip timestamps can be compared directly. A plain value; crosses threads freely.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The current CLOCK_MONOTONIC reading.
    public static func now() -> MonotonicInstant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicInstant(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }

    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    public static func + (a: Self, d: Duration) -> Self {
        let ns = d.nanosecondsClamped
        return ns >= 0 ? Self(nanoseconds: a.nanoseconds &+ UInt64(ns))
                       : Self(nanoseconds: a.nanoseconds &- min(a.nanoseconds, UInt64(-ns)))
    }

    /// `a - b` as a duration (negative when `a` is earlier).
    public static func - (a: Self, b: Self) -> Duration {
        a >= b ? .nanoseconds(Int64(a.nanoseconds - b.nanoseconds)) : .nanoseconds(-Int64(b.nanoseconds - a.nanoseconds))
    }

    public var description: String { "\(Double(nanoseconds) / 1e9)s" }
}

extension Duration {
    /// Whole nanoseconds, clamped to Int64.
    public var nanosecondsClamped: Int64 {
        let (s, atto) = components
        let (mul, o1) = s.multipliedReportingOverflow(by: 1_000_000_000)
        if o1 { return s < 0 ? .min : .max }
        let (sum, o2) = mul.addingReportingOverflow(atto / 1_000_000_000)
        return o2 ? (s < 0 ? .min : .max) : sum
    }

    /// The duration in milliseconds as a Double, for statistics and logs.
    public var milliseconds: Double {
        let (s, atto) = components
        return Double(s) * 1000 + Double(atto) / 1e15
    }
}
