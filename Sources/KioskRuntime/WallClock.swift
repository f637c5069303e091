import Glibc

/// The wall-clock time a scene's clocks show, in whole seconds since the epoch. Any thread.
public enum WallClock {
    /// CLOCK_REALTIME, read precisely. Not `time()`: glibc serves it from the coarse clock, which still gives the
    /// previous second for up to a tick (4-10 ms) after a boundary, and the stage's clock timer fires 2 ms after
    /// each boundary: with `time()` a clock could show every second one second late.
    public static func seconds() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int(ts.tv_sec)
    }
}
