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

    /// Progress at elapsed fraction `t` (clamped to 0...1).
    public func value(at t: Double) -> Double {
        let t = min(max(t, 0), 1)
        if self == .linear { return t }
        let (x1, y1, x2, y2) = controlPoints
        let s = Self.solveParameter(x: t, x1: x1, x2: x2)
        return Self.bezier(s, y1, y2)
    }

    /// One coordinate of the curve at parameter `s`, with end points 0 and 1.
    static func bezier(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let u = 1 - s
        return 3 * u * u * s * p1 + 3 * u * s * s * p2 + s * s * s
    }

    static func bezierSlope(_ s: Double, _ p1: Double, _ p2: Double) -> Double {
        let u = 1 - s
        return 3 * u * u * p1 + 6 * u * s * (p2 - p1) + 3 * s * s * (1 - p2)
    }

    /// The parameter whose x is `x`: Newton's method, falling back to bisection where the slope is flat.
    static func solveParameter(x: Double, x1: Double, x2: Double) -> Double {
        var s = x
        for _ in 0..<8 {
            let error = bezier(s, x1, x2) - x
            if abs(error) < 1e-9 { return s }
            let slope = bezierSlope(s, x1, x2)
            if abs(slope) < 1e-6 { break }
            s -= error / slope
        }
        var low = 0.0, high = 1.0
        s = x
        for _ in 0..<60 {
            let value = bezier(s, x1, x2)
            if abs(value - x) < 1e-9 { return s }
            if value < x { low = s } else { high = s }
            s = (low + high) / 2
        }
        return s
    }
}
