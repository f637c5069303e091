import KioskCore
import XCTest

final class TimingFunctionTests: XCTestCase {
    /// cubic-bezier(0.25, 0, 0.75, 1) and its slope, as tabulated in Chromium's ui/gfx/geometry/cubic_bezier_unittest.cc.
    func testMatchesChromiumsTable() {
        let curve = TimingFunction.cubicBezier(0.25, 0, 0.75, 1)
        let values: [(Double, Double)] = [
            (0.05, 0.01136), (0.1, 0.03978), (0.2, 0.12803), (0.25, 0.18235), (0.4, 0.36761), (0.5, 0.5),
            (0.6, 0.63238), (0.75, 0.81764), (0.9, 0.96021), (0.95, 0.98863),
        ]
        for (t, expected) in values {
            XCTAssertEqual(curve.value(at: t), expected, accuracy: 0.00015, "t = \(t)")
        }
        let slopes: [(Double, Double)] = [
            (0, 0), (0.05, 0.42170), (0.1, 0.69778), (0.25, 1.13576), (0.5, 1.33333), (0.8, 1.03184), (0.95, 0.42170), (1, 0),
        ]
        for (t, expected) in slopes {
            XCTAssertEqual(curve.slope(at: t), expected, accuracy: 0.00015, "t = \(t)")
        }
        // Control points outside 0...1 in y: exact at the midpoint by symmetry.
        XCTAssertEqual(TimingFunction.cubicBezier(0.5, 2, 0.5, 2).value(at: 0.5), 1.625, accuracy: 1e-12)
        XCTAssertEqual(TimingFunction.cubicBezier(0.5, -1, 0.5, -1).value(at: 0.5), -0.625, accuracy: 1e-12)
    }

    func testCSSEaseAtHalfway() {
        // CSS `ease` at x = 0.5: 0.8024 to four places; the exact value from the parameter with x(s) = 0.5, bisected.
        let ease = TimingFunction.cubicBezier(0.25, 0.1, 0.25, 1)
        var low = 0.0, high = 1.0
        for _ in 0..<100 {
            let s = (low + high) / 2
            let x = 3 * (1 - s) * (1 - s) * s * 0.25 + 3 * (1 - s) * s * s * 0.25 + s * s * s
            if x < 0.5 { low = s } else { high = s }
        }
        let s = (low + high) / 2
        let y = 3 * (1 - s) * (1 - s) * s * 0.1 + 3 * (1 - s) * s * s + s * s * s
        XCTAssertEqual(ease.value(at: 0.5), y, accuracy: 1e-9)
        XCTAssertEqual(ease.value(at: 0.5), 0.8024, accuracy: 5e-5)
    }

    func testEaseInOutIsSymmetric() {
        let curve = TimingFunction.easeInOut
        XCTAssertEqual(curve.value(at: 0.5), 0.5, accuracy: 1e-9)
        for t in stride(from: 0.0, through: 1.0, by: 0.05) {
            XCTAssertEqual(curve.value(at: t) + curve.value(at: 1 - t), 1, accuracy: 1e-9, "t = \(t)")
            XCTAssertEqual(curve.slope(at: t), curve.slope(at: 1 - t), accuracy: 1e-6, "t = \(t)")
        }
        XCTAssertEqual(curve.slope(at: 0), 0, accuracy: 1e-6)
        XCTAssertEqual(curve.slope(at: 1), 0, accuracy: 1e-6)
    }

    func testLinearIsTheIdentityAndEndPointsAreExact() {
        for t in stride(from: 0.0, through: 1.0, by: 0.1) {
            XCTAssertEqual(TimingFunction.linear.value(at: t), t)
            XCTAssertEqual(TimingFunction.linear.slope(at: t), 1)
            // The linear control points as a general bezier agree.
            XCTAssertEqual(TimingFunction.cubicBezier(0, 0, 1, 1).value(at: t), t, accuracy: 1e-9)
        }
        for curve in [TimingFunction.linear, .easeIn, .easeOut, .easeInOut, .cubicBezier(0.25, 0.1, 0.25, 1)] {
            XCTAssertEqual(curve.value(at: 0), 0, accuracy: 1e-12, "\(curve)")
            XCTAssertEqual(curve.value(at: 1), 1, accuracy: 1e-12, "\(curve)")
            XCTAssertEqual(curve.value(at: -0.5), 0, accuracy: 1e-12, "clamped below, \(curve)")
            XCTAssertEqual(curve.value(at: 1.5), 1, accuracy: 1e-12, "clamped above, \(curve)")
        }
    }

    func testNamedCurvesAreMonotone() {
        for curve in [TimingFunction.easeIn, .easeOut, .easeInOut, .cubicBezier(0.25, 0.1, 0.25, 1)] {
            var previous = curve.value(at: 0)
            for step in 1...200 {
                let value = curve.value(at: Double(step) / 200)
                XCTAssertGreaterThanOrEqual(value, previous, "\(curve) at \(Double(step) / 200)")
                previous = value
            }
        }
    }

    func testSlopeIsTheDerivativeOfValue() {
        let h = 1e-6
        for curve in [TimingFunction.easeIn, .easeOut, .easeInOut, .cubicBezier(0.3, 1.5, 0.8, 1.5)] {
            for t in [0.1, 0.3, 0.5, 0.7, 0.9] {
                let numeric = (curve.value(at: t + h) - curve.value(at: t - h)) / (2 * h)
                XCTAssertEqual(curve.slope(at: t), numeric, accuracy: 1e-4, "\(curve) at \(t)")
            }
        }
        // ease-out starts at its steepest: x1 = y1 = 0, so the limit is the ratio of second derivatives, 1/0.58.
        XCTAssertEqual(TimingFunction.easeOut.slope(at: 0), 1 / 0.58, accuracy: 1e-4)
    }

    func testValidity() {
        XCTAssertTrue(TimingFunction.cubicBezier(0.3, 1.5, 0.8, -2).isValid)
        XCTAssertFalse(TimingFunction.cubicBezier(-0.1, 0, 1, 1).isValid)
        XCTAssertFalse(TimingFunction.cubicBezier(0.1, .nan, 1, 1).isValid)
    }
}
