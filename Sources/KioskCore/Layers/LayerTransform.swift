/// A layer's 2D transform: a scale and a rotation about the layer's centre (CALayer's default anchor point), then a
/// translation, all in the parent's coordinates. It applies to the layer and its whole subtree, and moves pixels without
/// re-rendering them. A plain value.
public struct LayerTransform: Hashable, Sendable {
    public var translateX: Double
    public var translateY: Double
    public var scaleX: Double
    public var scaleY: Double
    /// Radians, clockwise on screen (y grows downwards), about the layer's centre.
    public var rotation: Double

    public init(translateX: Double = 0, translateY: Double = 0, scaleX: Double = 1, scaleY: Double = 1, rotation: Double = 0) {
        self.translateX = translateX; self.translateY = translateY
        self.scaleX = scaleX; self.scaleY = scaleY
        self.rotation = rotation
    }

    public static let identity = LayerTransform()

    public static func translation(x: Double, y: Double) -> LayerTransform {
        LayerTransform(translateX: x, translateY: y)
    }

    public static func scale(_ factor: Double) -> LayerTransform {
        LayerTransform(scaleX: factor, scaleY: factor)
    }

    public var isIdentity: Bool { self == .identity }
}
