import XCTest
@testable import KioskCore

/// A recorder's figures are within its precision of the exact percentiles: 0.1 % fine, 1 % coarse.
final class LatencyRecorderTests: XCTestCase {
    func testFiguresAreWithinThePrecisionAsked() {
        // 1 ms to 100 ms in steps of 0.1 ms: p50 50.5 ms, p99 99 ms, max 100 ms.
        let samples = (10...1000).map { Duration.microseconds($0 * 100) }
        for (precision, tolerance) in [(LatencyRecorder.Precision.fine, 0.001), (.coarse, 0.01)] {
            var recorder = LatencyRecorder(precision: precision)
            for sample in samples { recorder.record(sample) }
            let summary = recorder.summary
            XCTAssertEqual(summary.count, UInt64(samples.count))
            for (figure, exact) in [(summary.p50, 50.5), (summary.p99, 99.0), (summary.max, 100.0)] {
                XCTAssertEqual(figure, exact, accuracy: exact * tolerance + 0.1 + 0.001, "\(precision): \(figure) for \(exact)")
                XCTAssertGreaterThanOrEqual(figure, exact - 0.1, "\(precision)")
            }
        }
        XCTAssertEqual(LatencyRecorder().summary, LatencySummary(), "nothing recorded gives zeros")
    }

    func testByteCountsKeepTheirExactMaximum() {
        var recorder = ByteCountRecorder()
        for bytes in [4096, 8192, 1_228_800, 3_145_728] { recorder.record(bytes) }
        let summary = recorder.summary
        XCTAssertEqual(summary.max, 3_145_728, "a full-screen copy reads as exactly that")
        XCTAssertEqual(summary.count, 4)
        XCTAssertEqual(Double(summary.p50), 8192, accuracy: 8192 * 0.01, "within 1 %")
    }
}
