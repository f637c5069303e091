import Glibc

/// A 2D affine map, in Cairo's convention: `x' = a x + c y + tx`, `y' = b x + d y + ty` (y grows downwards, so a
/// positive rotation turns clockwise on screen). A plain value.
public struct AffineTransform: Hashable, Sendable, CustomStringConvertible {
    public var a: Double, b: Double, c: Double, d: Double
    public var tx: Double, ty: Double

    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.tx = tx; self.ty = ty
    }

    public static let identity = AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    public static func translation(x: Double, y: Double) -> AffineTransform {
        AffineTransform(a: 1, b: 0, c: 0, d: 1, tx: x, ty: y)
    }

    public static func scale(x: Double, y: Double) -> AffineTransform {
        AffineTransform(a: x, b: 0, c: 0, d: y, tx: 0, ty: 0)
    }

    /// Clockwise on screen by `radians`, about the origin. Quarter turns are exact (cos(π/2) computes as 6e-17,
    /// which would make a layer turned by a quarter miss the pixel grid by a hair).
    public static func rotation(_ radians: Double) -> AffineTransform {
        func snapped(_ value: Double) -> Double {
            if abs(value) < noise { return 0 }
            if abs(abs(value) - 1) < noise { return value < 0 ? -1 : 1 }
            return value
        }
        let cos = snapped(Glibc.cos(radians)), sin = snapped(Glibc.sin(radians))
        return AffineTransform(a: cos, b: sin, c: -sin, d: cos, tx: 0, ty: 0)
    }

    /// `other` first, then this one.
    public func concatenating(_ other: AffineTransform) -> AffineTransform {
        AffineTransform(
            a: a * other.a + c * other.b, b: b * other.a + d * other.b,
            c: a * other.c + c * other.d, d: b * other.c + d * other.d,
            tx: a * other.tx + c * other.ty + tx, ty: b * other.tx + d * other.ty + ty)
    }

    public func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + c * y + tx, b * x + d * y + ty)
    }

    /// Below this, a matrix term is rounding noise (cos(π/2) is 6e-17, not 0).
    static let noise = 1e-9

    /// Whether it only scales by positive factors and translates: a rectangle stays a rectangle with the same
    /// corners in the same order, so a layer can be drawn fitted to its bounding box.
    public var isPositiveScaleAndTranslation: Bool {
        abs(b) < Self.noise && abs(c) < Self.noise && a > Self.noise && d > Self.noise
    }

    /// The smallest pixel rectangle covering the image of the rectangle (0, 0)–(`width`, `height`).
    public func boundingRect(width: Double, height: Double) -> Rect {
        let corners = [apply(x: 0, y: 0), apply(x: width, y: 0), apply(x: 0, y: height), apply(x: width, y: height)]
        // The tolerance keeps exact integer positions that picked up rounding noise from growing by a pixel.
        let tolerance = 1e-6
        let minX = Int((corners.map(\.x).min()! + tolerance).rounded(.down))
        let maxX = Int((corners.map(\.x).max()! - tolerance).rounded(.up))
        let minY = Int((corners.map(\.y).min()! + tolerance).rounded(.down))
        let maxY = Int((corners.map(\.y).max()! - tolerance).rounded(.up))
        return Rect(x: minX, y: minY, width: max(0, maxX - minX), height: max(0, maxY - minY))
    }

    public var description: String { "[\(a) \(c) \(tx); \(b) \(d) \(ty)]" }
}
