#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import XCTest

final class SpringMotionTests: XCTestCase {
    /// The spring's equation integrated numerically (classic Runge-Kutta, 0.01 ms steps): an independent check of
    /// the closed forms.
    private func integrate(stiffness k: Double, damping c: Double, mass m: Double, from: Double, to: Double,
                           velocity: Double, until t: Double) -> (x: Double, v: Double) {
        let h = 1e-5
        var x = from, v = velocity
        func acceleration(_ x: Double, _ v: Double) -> Double { (-k * (x - to) - c * v) / m }
        let steps = Int((t / h).rounded())
        for _ in 0..<steps {
            let k1x = v, k1v = acceleration(x, v)
            let k2x = v + h / 2 * k1v, k2v = acceleration(x + h / 2 * k1x, v + h / 2 * k1v)
            let k3x = v + h / 2 * k2v, k3v = acceleration(x + h / 2 * k2x, v + h / 2 * k2v)
            let k4x = v + h * k3v, k4v = acceleration(x + h * k3x, v + h * k3v)
            x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
            v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        }
        return (x, v)
    }

    func testCriticallyDampedMatchesTheTextbookSolution() {
        // k = 100, m = 1, c = 20: ζ = 1, ω = 10.
        let spring = SpringMotion(stiffness: 100, damping: 20, mass: 1, from: 0, to: 1, velocity: 0)
        XCTAssertEqual(spring.dampingRatio, 1, accuracy: 1e-12)
        // x(t) = to + (x0 − to + (v0 + ω(x0 − to))·t)·e^(−ωt) = 1 − (1 + 10t)·e^(−10t); v(t) = 100·t·e^(−10t).
        XCTAssertEqual(spring.position(at: 0.1), 1 - 2 * exp(-1.0), accuracy: 1e-12)
        XCTAssertEqual(spring.position(at: 0.2), 1 - 3 * exp(-2.0), accuracy: 1e-12)
        XCTAssertEqual(spring.velocity(at: 0.1), 10 * exp(-1.0), accuracy: 1e-12)
        XCTAssertEqual(spring.velocity(at: 0.3), 30 * exp(-3.0), accuracy: 1e-12)

        let pushed = SpringMotion(stiffness: 100, damping: 20, mass: 1, from: 5, to: -3, velocity: 40)
        for t in [0.05, 0.13, 0.4, 1.0] {
            let y0 = 8.0, omega = 10.0
            let expected = -3 + (y0 + (40 + omega * y0) * t) * exp(-omega * t)
            XCTAssertEqual(pushed.position(at: t), expected, accuracy: 1e-9, "t = \(t)")
            let reference = integrate(stiffness: 100, damping: 20, mass: 1, from: 5, to: -3, velocity: 40, until: t)
            XCTAssertEqual(pushed.velocity(at: t), reference.v, accuracy: 1e-6, "t = \(t)")
        }
    }

    func testUnderdampedMatchesTheAmplitudePhaseForm() {
        // k = 100, m = 1, c = 12: ζ = 0.6, ω = 10, ωd = 8.
        let spring = SpringMotion(stiffness: 100, damping: 12, mass: 1, from: 0, to: 1, velocity: 0)
        XCTAssertEqual(spring.dampingRatio, 0.6, accuracy: 1e-12)
        // y = x − 1 = −A·e^(−6t)·cos(8t − φ) with A = √(1 + (6/8)²) = 1.25, tan φ = 6/8.
        let phase = atan2(6.0, 8.0)
        for t in [0.0, 0.1, 0.25, 0.5, 0.9] {
            let expected = 1 - 1.25 * exp(-6 * t) * cos(8 * t - phase)
            XCTAssertEqual(spring.position(at: t), expected, accuracy: 1e-12, "t = \(t)")
        }
        // It overshoots: the first peak is at ωd·t = π, x = 1 + e^(−6π/8).
        XCTAssertEqual(spring.position(at: Double.pi / 8), 1 + exp(-6 * Double.pi / 8), accuracy: 1e-12)
        XCTAssertEqual(spring.velocity(at: Double.pi / 8), 0, accuracy: 1e-12)

        let flung = SpringMotion(stiffness: 300, damping: 10, mass: 2, from: 20, to: 0, velocity: -150)
        for t in [0.03, 0.2, 0.77, 1.5] {
            let reference = integrate(stiffness: 300, damping: 10, mass: 2, from: 20, to: 0, velocity: -150, until: t)
            XCTAssertEqual(flung.position(at: t), reference.x, accuracy: 1e-6, "t = \(t)")
            XCTAssertEqual(flung.velocity(at: t), reference.v, accuracy: 1e-6, "t = \(t)")
        }
    }

    func testOverdampedMatchesTheHyperbolicForm() {
        // k = 100, m = 1, c = 26: ζ = 1.3, γ = ω·√(ζ² − 1) = √69.
        let spring = SpringMotion(stiffness: 100, damping: 26, mass: 1, from: 10, to: 2, velocity: 30)
        let gamma = 69.0.squareRoot(), y0 = 8.0, v0 = 30.0
        for t in [0.02, 0.1, 0.35, 1.2] {
            let y = exp(-13 * t) * (y0 * cosh(gamma * t) + (v0 + 13 * y0) / gamma * sinh(gamma * t))
            XCTAssertEqual(spring.position(at: t), 2 + y, accuracy: 1e-9, "t = \(t)")
            let reference = integrate(stiffness: 100, damping: 26, mass: 1, from: 10, to: 2, velocity: 30, until: t)
            XCTAssertEqual(spring.position(at: t), reference.x, accuracy: 1e-6, "t = \(t)")
            XCTAssertEqual(spring.velocity(at: t), reference.v, accuracy: 1e-6, "t = \(t)")
        }
        // Never crosses the end value when released from rest.
        let released = SpringMotion(stiffness: 100, damping: 26, mass: 1, from: 10, to: 2)
        for step in 0...200 { XCTAssertGreaterThan(released.position(at: Double(step) * 0.01), 2) }
    }

    func testNearlyCriticalDampingAgreesWithCritical() {
        let critical = SpringMotion(stiffness: 100, damping: 20, from: 0, to: 1, velocity: 3)
        let below = SpringMotion(stiffness: 100, damping: 20 - 1e-4, from: 0, to: 1, velocity: 3)
        let above = SpringMotion(stiffness: 100, damping: 20 + 1e-4, from: 0, to: 1, velocity: 3)
        for t in [0.05, 0.2, 0.6] {
            XCTAssertEqual(below.position(at: t), critical.position(at: t), accuracy: 1e-5)
            XCTAssertEqual(above.position(at: t), critical.position(at: t), accuracy: 1e-5)
            XCTAssertEqual(below.velocity(at: t), critical.velocity(at: t), accuracy: 1e-4)
            XCTAssertEqual(above.velocity(at: t), critical.velocity(at: t), accuracy: 1e-4)
        }
    }

    func testStartsAtFromWithTheGivenVelocity() {
        let spring = SpringMotion(stiffness: 300, damping: 20, mass: 1, from: 7, to: 70, velocity: -12)
        XCTAssertEqual(spring.position(at: 0), 7)
        XCTAssertEqual(spring.velocity(at: 0), -12)
        XCTAssertEqual(spring.position(at: 1e-9), 7, accuracy: 1e-6)
        XCTAssertEqual(spring.velocity(at: 1e-9), -12, accuracy: 1e-3)
    }

    func testSettlesWithinThresholdInAReasonableTime() throws {
        // pop's defaults: ζ ≈ 0.577, envelope e^(−10t); 100 units to cover.
        let spring = SpringMotion(stiffness: 300, damping: 20, mass: 1, from: 0, to: 100)
        let threshold = 0.001
        let settled = try XCTUnwrap(spring.settlingDuration(threshold: threshold))
        // Position amplitude ≈ 122, speed amplitude ≈ ω·122 ≈ 2100: both below 0.001 by ln(2.1e6)/10 ≈ 1.46 s.
        XCTAssertGreaterThan(settled, 0.5)
        XCTAssertLessThan(settled, 1.46)
        XCTAssertTrue(spring.isSettled(at: settled, threshold: threshold))
        XCTAssertFalse(spring.isSettled(at: settled - 0.001, threshold: threshold))
        XCTAssertFalse(spring.isSettled(at: 0.3, threshold: threshold))
        for t in stride(from: settled, through: settled + 2, by: 0.01) {
            XCTAssertEqual(spring.position(at: t), 100, accuracy: 2 * threshold)
        }
        // A stiffer spring with the same damping ratio settles sooner.
        let stiffer = SpringMotion(stiffness: 1200, damping: 40, mass: 1, from: 0, to: 100)
        XCTAssertLessThan(try XCTUnwrap(stiffer.settlingDuration(threshold: threshold)), settled)
    }

    func testAnUndampedSpringNeverSettles() {
        let spring = SpringMotion(stiffness: 100, damping: 0, from: 0, to: 1)
        XCTAssertEqual(spring.position(at: Double.pi / 10), 2, accuracy: 1e-12, "x = 1 − cos(10t)")
        XCTAssertNil(spring.settlingDuration(threshold: 0.001, limit: 5))
    }
}
