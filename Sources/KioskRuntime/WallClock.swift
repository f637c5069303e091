import Glibc
import KioskCore

/// A reading of the wall clock (CLOCK_REALTIME): nanoseconds since the epoch. Unlike the loop's
/// `MonotonicInstant` it can jump, forwards or back, whenever the clock is set (NTP at boot on a board without an
/// RTC, `date -s`, timedated). A plain `Sendable` value.
public struct WallTime: Hashable, Comparable, Sendable {
    /// Nanoseconds since 1970-01-01 00:00:00 UTC; negative before it.
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// `seconds` since the epoch plus `nanoseconds` into the next one.
    public init(seconds: Int, nanoseconds: Int64 = 0) {
        self.nanoseconds = Int64(seconds) * 1_000_000_000 + nanoseconds
    }

    /// The whole second it falls in, a `time_t` (rounded down, also before the epoch).
    public var seconds: Int {
        Int(nanoseconds >= 0 ? nanoseconds / 1_000_000_000 : (nanoseconds + 1) / 1_000_000_000 - 1)
    }

    /// How far into its second it is, 0 ..< 1 s in nanoseconds.
    public var nanosecondsIntoSecond: Int64 { nanoseconds - Int64(seconds) * 1_000_000_000 }

    public static func < (a: WallTime, b: WallTime) -> Bool { a.nanoseconds < b.nanoseconds }

    public static func + (time: WallTime, duration: Duration) -> WallTime {
        WallTime(nanoseconds: time.nanoseconds + duration.nanosecondsClamped)
    }
}

/// The wall-clock time a scene's clocks show. Any thread.
public enum WallClock {
    /// CLOCK_REALTIME, read precisely. Not `time()`: glibc serves it from the coarse clock, which still gives the
    /// previous second for up to a tick (4-10 ms) after a boundary, and the stage's clock timer fires 2 ms after
    /// each boundary: with `time()` a clock could show every second one second late.
    public static func now() -> WallTime {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return WallTime(seconds: Int(ts.tv_sec), nanoseconds: Int64(ts.tv_nsec))
    }

    /// `now()` in whole seconds since the epoch.
    public static func seconds() -> Int { now().seconds }
}
