#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import XCTest

final class DecayMotionTests: XCTestCase {
    func testStopPointAndPositions() {
        let decay = DecayMotion(from: 100, velocity: 1000, deceleration: 0.998)
        // x(∞) = x0 − v0/(1000·ln d); ln 0.998 ≈ −0.0020020027 so the fling travels ≈ 499.5.
        XCTAssertEqual(decay.stopPoint, 100 - 1000 / (1000 * log(0.998)), accuracy: 1e-9)
        XCTAssertEqual(decay.stopPoint, 599.4996, accuracy: 1e-3)
        XCTAssertEqual(decay.position(at: 0), 100)
        XCTAssertEqual(decay.velocity(at: 0), 1000)
        for t in [0.016, 0.1, 0.5, 2.0] {
            // v(t) = v0·d^(1000t); x(t) = x0 + v0·(d^(1000t) − 1)/(1000·ln d).
            let remaining = pow(0.998, 1000 * t)
            XCTAssertEqual(decay.velocity(at: t), 1000 * remaining, accuracy: 1e-9, "t = \(t)")
            XCTAssertEqual(decay.position(at: t), 100 + 1000 * (remaining - 1) / (1000 * log(0.998)), accuracy: 1e-9)
        }
        // After one millisecond the velocity has lost exactly 0.2 %.
        XCTAssertEqual(decay.velocity(at: 0.001), 998, accuracy: 1e-9)
        // The position approaches the stop point from below without passing it.
        XCTAssertLessThan(decay.position(at: 5), decay.stopPoint - 0.02)
        XCTAssertEqual(decay.position(at: 20), decay.stopPoint, accuracy: 1e-6)
    }

    func testPositionIsTheIntegralOfVelocity() {
        let decay = DecayMotion(from: -4, velocity: 350, deceleration: 0.995)
        // Trapezoids over 0.1 ms.
        var x = -4.0, t = 0.0
        let h = 1e-4
        while t < 0.3 - h / 2 {
            x += (decay.velocity(at: t) + decay.velocity(at: t + h)) / 2 * h
            t += h
        }
        XCTAssertEqual(decay.position(at: 0.3), x, accuracy: 1e-5)
    }

    func testNegativeVelocityMovesTheOtherWay() {
        let decay = DecayMotion(from: 50, velocity: -800)
        XCTAssertEqual(decay.deceleration, 0.998)
        XCTAssertEqual(decay.stopPoint, 50 + 800 / (1000 * log(0.998)), accuracy: 1e-9)
        XCTAssertLessThan(decay.stopPoint, 50 - 399)
        XCTAssertEqual(decay.position(at: 0.25), 50 - 800 * (pow(0.998, 250) - 1) / (1000 * log(0.998)), accuracy: 1e-9)
        XCTAssertLessThan(decay.velocity(at: 0.25), 0)
        XCTAssertGreaterThan(decay.position(at: 0.5), decay.stopPoint)
    }

    func testDurationUntilTheSpeedFallsBelowTheThreshold() {
        let decay = DecayMotion(from: 0, velocity: -1000)
        let duration = decay.duration(threshold: 0.5)
        XCTAssertEqual(abs(decay.velocity(at: duration)), 0.5, accuracy: 1e-9)
        // ln(0.5/1000)/(1000·ln 0.998) ≈ 3.797 s.
        XCTAssertEqual(duration, log(0.0005) / (1000 * log(0.998)), accuracy: 1e-12)
        XCTAssertEqual(DecayMotion(from: 3, velocity: 0.1).duration(threshold: 0.5), 0)
        XCTAssertEqual(DecayMotion(from: 3, velocity: 0).stopPoint, 3)
    }
}
