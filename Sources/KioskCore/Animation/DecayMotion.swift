#if canImport(Glibc)
import Glibc
#endif

/// pop's decay: a fling that slows by a constant factor, `deceleration`, every millisecond, so
/// `v(t) = velocity·deceleration^(1000·t)` and the value approaches `stopPoint` without reaching it. Units are those
/// of the animated value, per second. A plain value; any thread.
public struct DecayMotion: Sendable, Equatable {
    public let from: Double
    public let velocity: Double
    /// The fraction of its velocity the motion keeps each millisecond; pop's default is 0.998.
    public let deceleration: Double
    /// 1000·ln(deceleration): the (negative) exponential rate per second.
    private let rate: Double

    /// pop's default deceleration.
    public static let defaultDeceleration = 0.998

    /// - Precondition: `deceleration` is in 0 < d < 1 and the values are finite; `AnimationCurve.validate` checks
    ///   user input before it gets here.
    public init(from: Double, velocity: Double, deceleration: Double = DecayMotion.defaultDeceleration) {
        precondition(deceleration > 0 && deceleration < 1, "DecayMotion: deceleration \(deceleration) must be in 0 < d < 1")
        precondition(from.isFinite && velocity.isFinite, "DecayMotion: values must be finite")
        self.from = from; self.velocity = velocity; self.deceleration = deceleration
        rate = 1000 * log(deceleration)
    }

    /// The value `t` seconds after the start: the integral of the velocity, `from + v0·(d^(1000t) − 1)/(1000·ln d)`.
    public func position(at t: Double) -> Double {
        guard t > 0 else { return from }
        return from + velocity * expm1(rate * t) / rate
    }

    /// The velocity, per second, `t` seconds after the start.
    public func velocity(at t: Double) -> Double {
        guard t > 0 else { return velocity }
        return velocity * exp(rate * t)
    }

    /// Where the motion ends: the limit of `position` as t → ∞, `from − v0/(1000·ln d)`.
    public var stopPoint: Double { from - velocity / rate }

    /// Seconds until the speed falls below `threshold` (0 if it already is). Snapping to `stopPoint` then jumps
    /// `threshold/(1000·|ln d|)` at most, half the threshold at pop's default deceleration.
    public func duration(threshold: Double) -> Double {
        let speed = abs(velocity)
        guard threshold > 0 else { return .infinity }
        guard speed >= threshold else { return 0 }
        return log(threshold / speed) / rate
    }
}
