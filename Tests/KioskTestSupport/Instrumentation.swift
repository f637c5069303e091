import Foundation

/// How much slower this test process's code runs than the build kioskd ships: 1 normally; the ThreadSanitizer
/// tier sets `KIOSKD_TSAN_SLOWDOWN` (10), since every memory access it instruments costs several times more.
/// Tests with latency limits widen them by it, and floods that exist to find races rather than to measure
/// throughput shrink by it: a race needs the paths crossed, not ten thousand crossings.
public enum Instrumentation {
    public static var slowdown: Double {
        ProcessInfo.processInfo.environment["KIOSKD_TSAN_SLOWDOWN"].flatMap(Double.init).map { max($0, 1) } ?? 1
    }

    /// Whether this process runs instrumented (the ThreadSanitizer tier).
    public static var isInstrumented: Bool { slowdown > 1 }
}
