/// How an animation moves from the current value: pop's three kinds. A plain value; any thread.
public enum AnimationCurve: Sendable, Equatable {
    /// A fixed duration (seconds) along an easing curve; ends exactly at the end value after `duration`.
    case basic(duration: Double, timing: TimingFunction = .easeInOut)
    /// A damped spring towards the end value (`SpringMotion`, one per component). It ends once every component is
    /// within `threshold` of the end value and slower than `threshold` per second. `velocity` (per second, one per
    /// component) is the initial velocity; nil takes over the velocity of the animation it replaces, or 0.
    case spring(stiffness: Double = 300, damping: Double = 20, mass: Double = 1, velocity: [Double]? = nil,
                threshold: Double = 0.001)
    /// A fling that slows down on its own (`DecayMotion`, one per component) and ends where it stops: there is no
    /// end value. It ends once every component is slower than `threshold` per second, and snaps to the stop point.
    /// `velocity` nil takes over the velocity of the animation it replaces, or 0.
    case decay(velocity: [Double]? = nil, deceleration: Double = DecayMotion.defaultDeceleration, threshold: Double = 0.001)

    /// Checks the parameters against `componentCount` components; nil when they make a valid animation.
    public func validationError(componentCount: Int) -> AnimationError? {
        switch self {
        case .basic(let duration, let timing):
            guard duration.isFinite, duration >= 0 else { return .invalidCurve("duration \(duration) must be 0 or more seconds") }
            guard timing.isValid else { return .invalidCurve("\(timing): x1 and x2 must be in 0...1") }
        case .spring(let stiffness, let damping, let mass, let velocity, let threshold):
            guard stiffness.isFinite, stiffness > 0 else { return .invalidCurve("spring stiffness \(stiffness) must be positive") }
            // An undamped spring oscillates for ever and would keep the display flipping.
            guard damping.isFinite, damping > 0 else { return .invalidCurve("spring damping \(damping) must be positive") }
            guard mass.isFinite, mass > 0 else { return .invalidCurve("spring mass \(mass) must be positive") }
            if let error = Self.check(velocity, componentCount) { return error }
            guard threshold.isFinite, threshold > 0 else { return .invalidCurve("threshold \(threshold) must be positive") }
        case .decay(let velocity, let deceleration, let threshold):
            guard deceleration > 0, deceleration < 1 else {
                return .invalidCurve("decay deceleration \(deceleration) must be in 0 < d < 1")
            }
            if let error = Self.check(velocity, componentCount) { return error }
            guard threshold.isFinite, threshold > 0 else { return .invalidCurve("threshold \(threshold) must be positive") }
        }
        return nil
    }

    private static func check(_ velocity: [Double]?, _ componentCount: Int) -> AnimationError? {
        guard let velocity else { return nil }
        guard velocity.count == componentCount else {
            return .componentCount(what: "velocity", expected: componentCount, got: velocity.count)
        }
        guard velocity.allSatisfy(\.isFinite) else { return .invalidCurve("velocity \(velocity) must be finite") }
        return nil
    }
}

/// Why `Animator.animate` refused an animation. A plain value.
public enum AnimationError: Error, Equatable, CustomStringConvertible {
    /// An array had the wrong number of components for the property.
    case componentCount(what: String, expected: Int, got: Int)
    /// A curve parameter out of range, with the reason.
    case invalidCurve(String)
    /// An end value that is not finite.
    case nonFiniteValue([Double])
    /// A basic or spring animation needs an end value; a decay finds its own and takes none.
    case endValue(String)

    public var description: String {
        switch self {
        case .componentCount(let what, let expected, let got): "\(what) has \(got) components, the property has \(expected)"
        case .invalidCurve(let reason): reason
        case .nonFiniteValue(let value): "value \(value) is not finite"
        case .endValue(let reason): reason
        }
    }
}
