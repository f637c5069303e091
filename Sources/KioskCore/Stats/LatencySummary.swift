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

/// A latency recorder in microseconds backed by HdrHistogram (3 significant digits, up to 10 minutes).
/// A value type; each owner keeps its own.
public struct LatencyRecorder: Sendable {
    private var histogram = Histogram<UInt64>(highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: .three)

    public init() {}

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
