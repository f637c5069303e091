/// A touch calibration as libinput defines it (`LIBINPUT_CALIBRATION_MATRIX`, `libinput_device_config_calibration_
/// set_matrix`): the first two rows of a 3x3 matrix applied to positions normalized to 0...1,
/// `x' = a x + b y + c`, `y' = d x + e y + f`. `[0, 1, 0, 1, 0, 0]` swaps the axes; `[-1, 0, 1, 0, 1, 0]` mirrors
/// x. A plain value.
public struct CalibrationMatrix: Sendable, Equatable, CustomStringConvertible {
    public var a: Double, b: Double, c: Double, d: Double, e: Double, f: Double

    public static let identity = CalibrationMatrix(a: 1, b: 0, c: 0, d: 0, e: 1, f: 0)

    public init(a: Double, b: Double, c: Double, d: Double, e: Double, f: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f
    }

    /// The six values in libinput's order; the error says what is wrong with them.
    public init(values: [Double]) throws(CalibrationError) {
        guard values.count == 6 else { throw CalibrationError("a calibration matrix has 6 values [a, b, c, d, e, f], got \(values.count)") }
        guard values.allSatisfy(\.isFinite) else { throw CalibrationError("calibration values must be finite numbers") }
        self.init(a: values[0], b: values[1], c: values[2], d: values[3], e: values[4], f: values[5])
    }

    /// Parses `a,b,c,d,e,f` or `[a, b, c, d, e, f]` (spaces allowed), as `--calibration` takes it.
    public init(parsing text: String) throws(CalibrationError) {
        func trimmed<S: StringProtocol>(_ s: S, _ drop: Set<Character>) -> String {
            String(s.drop(while: { drop.contains($0) }).reversed().drop(while: { drop.contains($0) }).reversed())
        }
        let inner = trimmed(text, ["[", "]", " "])
        var values: [Double] = []
        for part in inner.split(separator: ",", omittingEmptySubsequences: false).map({ trimmed($0, [" "]) }) {
            guard let value = Double(part) else { throw CalibrationError("'\(part)' in '\(text)' is not a number") }
            values.append(value)
        }
        try self.init(values: values)
    }

    public var values: [Double] { [a, b, c, d, e, f] }

    /// Where the device position (`x`, `y`, normalized) lands after calibration, as libinput computes it.
    public func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + b * y + c, d * x + e * y + f)
    }

    public var description: String { "[" + values.map { "\($0)" }.joined(separator: ", ") + "]" }
}

/// A calibration matrix that cannot be used, with the reason. An immutable value.
public struct CalibrationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
