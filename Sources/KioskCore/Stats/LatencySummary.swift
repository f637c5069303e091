import Histogram

/// Percentiles of a duration distribution, in milliseconds, as stats files report them.
public struct LatencySummary: Codable, Sendable, Equatable {
    public var p50: Double
    public var p99: Double
    public var max: Double
    public var count: UInt64

    public init(p50: Double = 0, p99: Double = 0, max: Double = 0, count: UInt64 = 0) {
        self.p50 = p50; self.p99 = p99; self.max = max; self.count = count
    }
}

/// A latency recorder in microseconds backed by HdrHistogram (up to 10 minutes). A value type; each owner keeps its
/// own.
///
/// Its precision is its memory: HdrHistogram allocates and zeroes a count for every bucket at once, 172 KB at three
/// significant digits (0.1 %) and 23 KB at two (1 %). The engine keeps a recorder per kind of layer content and
/// one for page readiness besides its flip intervals; at three digits each, they were 1.5 MB of a 35 MB daemon
/// (docs/design.md, "The process"). Figures a target is judged by (flip intervals, the benches' latencies) keep
/// three digits; the engine's diagnostics take two.
public struct LatencyRecorder: Sendable {
    public enum Precision: Sendable {
        /// Three significant digits: within 0.1 %.
        case fine
        /// Two significant digits: within 1 %.
        case coarse
    }

    private var histogram: Histogram<UInt64>

    public init(precision: Precision = .fine) {
        histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000,
                                      numberOfSignificantValueDigits: precision == .fine ? .three : .two)
    }

    public mutating func record(_ duration: Duration) {
        let us = max(0, duration.nanosecondsClamped / 1000)
        _ = histogram.record(UInt64(min(us, 600_000_000)))
    }

    public var count: UInt64 { histogram.totalCount }

    public var summary: LatencySummary {
        guard histogram.totalCount > 0 else { return LatencySummary() }
        func ms(_ v: UInt64) -> Double { (Double(v) / 1000 * 1000).rounded() / 1000 }
        return LatencySummary(p50: ms(histogram.valueAtPercentile(50)), p99: ms(histogram.valueAtPercentile(99)),
                              max: ms(histogram.max), count: histogram.totalCount)
    }
}
