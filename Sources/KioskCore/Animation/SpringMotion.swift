#if canImport(Glibc)
import Glibc
#endif

/// A damped spring in one dimension, solved in closed form: `mass·x'' + damping·x' + stiffness·(x − to) = 0` from
/// `from` with initial velocity `velocity`. Evaluating at any time costs the same and never drifts, unlike stepping
/// an integrator frame by frame, so a dropped frame changes nothing about where the spring is. Units are those of
/// the animated value, per second. A plain value; any thread.
public struct SpringMotion: Sendable, Equatable {
    public let stiffness: Double
    public let damping: Double
    public let mass: Double
    public let from: Double
    public let to: Double
    public let velocity: Double

    /// The three solutions of the spring's equation, by damping ratio.
    enum Regime: Sendable, Equatable {
        /// ζ < 1: oscillates at `dampedFrequency` inside an envelope decaying at ζ·ω0.
        case underdamped
        /// ζ = 1: the fastest return without overshooting more than once.
        case criticallyDamped
        /// ζ > 1: two real exponentials, no oscillation.
        case overdamped
    }

    /// √(stiffness/mass), the undamped angular frequency ω0 (radians per second).
    public let naturalFrequency: Double
    /// damping / (2·√(stiffness·mass)), ζ.
    public let dampingRatio: Double
    let regime: Regime
    // Coefficients of the solution for the offset y = x − to, fixed at construction.
    private let a: Double
    private let b: Double
    /// Underdamped: the damped frequency; overdamped: unused. Exponential rates below are negative.
    private let dampedFrequency: Double
    private let rate1: Double
    private let rate2: Double

    /// Damping ratios this close to 1 use the critically damped solution: the underdamped one divides by a damped
    /// frequency that vanishes there, and the two agree to well within display precision.
    static let criticalTolerance = 1e-6

    /// - Precondition: `stiffness` and `mass` are positive, `damping` is not negative, and all values are finite.
    ///   `AnimationCurve.validate` checks user input before it gets here.
    public init(stiffness: Double, damping: Double, mass: Double = 1, from: Double, to: Double, velocity: Double = 0) {
        precondition(stiffness > 0 && stiffness.isFinite, "SpringMotion: stiffness \(stiffness) must be positive")
        precondition(mass > 0 && mass.isFinite, "SpringMotion: mass \(mass) must be positive")
        precondition(damping >= 0 && damping.isFinite, "SpringMotion: damping \(damping) must not be negative")
        precondition(from.isFinite && to.isFinite && velocity.isFinite, "SpringMotion: values must be finite")
        self.stiffness = stiffness; self.damping = damping; self.mass = mass
        self.from = from; self.to = to; self.velocity = velocity

        let omega = (stiffness / mass).squareRoot()
        let zeta = damping / (2 * (stiffness * mass).squareRoot())
        naturalFrequency = omega
        dampingRatio = zeta
        let y0 = from - to
        if abs(zeta - 1) < Self.criticalTolerance {
            // y = (a + b·t)·e^(−ω0·t)
            regime = .criticallyDamped
            a = y0
            b = velocity + omega * y0
            dampedFrequency = 0; rate1 = -omega; rate2 = -omega
        } else if zeta < 1 {
            // y = e^(−ζω0·t)·(a·cos ωd·t + b·sin ωd·t)
            regime = .underdamped
            let omegaD = omega * (1 - zeta * zeta).squareRoot()
            a = y0
            b = (velocity + zeta * omega * y0) / omegaD
            dampedFrequency = omegaD; rate1 = -zeta * omega; rate2 = -zeta * omega
        } else {
            // y = a·e^(r1·t) + b·e^(r2·t), r1 the slow root, r2 the fast one.
            regime = .overdamped
            let root = (zeta * zeta - 1).squareRoot()
            let r1 = -omega * (zeta - root)
            let r2 = -omega * (zeta + root)
            b = (velocity - r1 * y0) / (r2 - r1)
            a = y0 - b
            dampedFrequency = 0; rate1 = r1; rate2 = r2
        }
    }

    /// The value `t` seconds after the start (t ≤ 0 gives `from`).
    public func position(at t: Double) -> Double {
        guard t > 0 else { return from }
        return to + offset(at: t)
    }

    /// The velocity, per second, `t` seconds after the start (t ≤ 0 gives the initial velocity).
    public func velocity(at t: Double) -> Double {
        guard t > 0 else { return velocity }
        switch regime {
        case .criticallyDamped:
            return (b - naturalFrequency * (a + b * t)) * exp(rate1 * t)
        case .underdamped:
            let decay = rate1, omegaD = dampedFrequency
            let c = cos(omegaD * t), s = sin(omegaD * t)
            return exp(decay * t) * ((decay * a + omegaD * b) * c + (decay * b - omegaD * a) * s)
        case .overdamped:
            return a * rate1 * exp(rate1 * t) + b * rate2 * exp(rate2 * t)
        }
    }

    private func offset(at t: Double) -> Double {
        switch regime {
        case .criticallyDamped:
            return (a + b * t) * exp(rate1 * t)
        case .underdamped:
            return exp(rate1 * t) * (a * cos(dampedFrequency * t) + b * sin(dampedFrequency * t))
        case .overdamped:
            return a * exp(rate1 * t) + b * exp(rate2 * t)
        }
    }

    /// Whether both the distance to `to` and the speed are below `threshold` at `t`: the test pop applies each
    /// frame before snapping to the end value.
    public func isSettled(at t: Double, threshold: Double) -> Bool {
        abs(position(at: t) - to) < threshold && abs(velocity(at: t)) < threshold
    }

    /// The first millisecond at which the spring is settled, or nil if it is not within `limit` seconds (an
    /// undamped spring never is). A scan rather than a formula, so it agrees with what an animator stepping the
    /// spring would see; it is for planning and tests, not for every frame.
    public func settlingDuration(threshold: Double, limit: Double = 600) -> Double? {
        var milliseconds = 0.0
        while milliseconds <= limit * 1000 {
            let t = milliseconds / 1000
            if isSettled(at: t, threshold: threshold) { return t }
            milliseconds += 1
        }
        return nil
    }
}
