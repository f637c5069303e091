/// A basic animation's timing curve, in CSS's names: maps elapsed fraction 0...1 to progress 0...1 (progress may
/// leave 0...1 for bezier control points outside it). A plain value; any thread.
public enum TimingFunction: Sendable, Equatable, Hashable {
    case linear, easeIn, easeOut, easeInOut
    /// CSS `cubic-bezier(x1, y1, x2, y2)`: a curve from (0,0) to (1,1); x1 and x2 in 0...1.
    case cubicBezier(Double, Double, Double, Double)

    /// The control points of the curve (CSS's definitions of the named curves).
    public var controlPoints: (x1: Double, y1: Double, x2: Double, y2: Double) {
        switch self {
        case .linear: (0, 0, 1, 1)
        case .easeIn: (0.42, 0, 1, 1)
        case .easeOut: (0, 0, 0.58, 1)
        case .easeInOut: (0.42, 0, 0.58, 1)
        case .cubicBezier(let x1, let y1, let x2, let y2): (x1, y1, x2, y2)
        }
    }

    /// Whether the curve is a function of time, as CSS requires: x1 and x2 finite and in 0...1, y1 and y2 finite.
    public var isValid: Bool {
        let (x1, y1, x2, y2) = controlPoints
        return (0...1).contains(x1) && (0...1).contains(x2) && y1.isFinite && y2.isFinite
    }

    /// Progress at elapsed fraction `t` (clamped to 0...1).
    public func value(at t: Double) -> Double {
        let t = min(max(t, 0), 1)
        if self == .linear { return t }
        let (x1, y1, x2, y2) = controlPoints
        let s = Self.solveParameter(x: t, x1: x1, x2: x2)
        return Self.bezier(s, y1, y2)
    }

    /// d(progress)/d(fraction) at elapsed fraction `t` (clamped to 0...1): what turns an animation's progress into a
    /// velocity. Where the curve's x stands still at an end point (`easeOut` starts with x1 = 0), the limit is taken
    /// by evaluating a hair inside the curve; a vertical tangent there gives a large but finite slope.
    public func slope(at t: Double) -> Double {
        if self == .linear { return 1 }
        let t = min(max(t, 0), 1)
        let (x1, y1, x2, y2) = controlPoints
        let edge = 1e-7
        let s = min(max(Self.solveParameter(x: t, x1: x1, x2: x2), edge), 1 - edge)
        let dx = Self.bezierSlope(s, x1, x2)
        let dy = Self.bezierSlope(s, y1, y2)
        // x is non-decreasing in s for valid curves; a flat spot inside (x1 = x2 = 0.5 style cusps) is an infinite
        // slope, reported as a large one rather than a division by zero.
        return dy / max(dx, 1e-12)
    }

    /// One coordinate of the curve at parameter `s`, with end points 0 and 1.
    static func bezier(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let u = 1 - s
        return 3 * u * u * s * p1 + 3 * u * s * s * p2 + s * s * s
    }

    /// The derivative of `bezier` with respect to `s`.
    static func bezierSlope(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let u = 1 - s
        return 3 * u * u * p1 + 6 * u * s * (p2 - p1) + 3 * s * s * (1 - p2)
    }

    /// The parameter whose x is `x`: Newton's method, falling back to bisection where the slope is flat or Newton
    /// leaves 0...1 (the cubic has other roots outside the curve's span).
    static func solveParameter(x: Double, x1: Double, x2: Double) -> Double {
        var s = x
        for _ in 0..<8 {
            let error = bezier(s, x1, x2) - x
            if abs(error) < 1e-12 { return s }
            let slope = bezierSlope(s, x1, x2)
            if abs(slope) < 1e-6 { break }
            s -= error / slope
            if !(0...1).contains(s) { break }
        }
        // x(s) is non-decreasing on 0...1 when x1 and x2 are in 0...1, so bisection always converges.
        var low = 0.0, high = 1.0
        s = x
        for _ in 0..<80 {
            let value = bezier(s, x1, x2)
            if abs(value - x) < 1e-12 { return s }
            if value < x { low = s } else { high = s }
            s = (low + high) / 2
        }
        return s
    }
}
