/// A value of `Target` that animations can drive, as a fixed number of `Double` components (pop's
/// `POPAnimatableProperty`). Springs and decays run one motion per component, all with the same parameters.
///
/// The standard layer properties are below; anything else (a colour as four components, a gauge's progress) is
/// made with closures:
///
///     let fill = AnimatableProperty<Gauge>(name: "fill", componentCount: 1,
///                                          read: { [$0.fill] }, write: { $0.fill = $1[0] })
///
/// `write` always gets exactly `componentCount` values; `read` must return that many. The closures run on the main
/// thread, where `Animator` lives; they should not retain the target (it is passed in).
public struct AnimatableProperty<Target: AnyObject> {
    /// The default animation key, so a second animation of the same property of a target replaces the first.
    public let name: String
    public let componentCount: Int
    public let read: (Target) -> [Double]
    public let write: (Target, [Double]) -> Void

    public init(name: String, componentCount: Int, read: @escaping (Target) -> [Double], write: @escaping (Target, [Double]) -> Void) {
        self.name = name
        self.componentCount = componentCount
        self.read = read
        self.write = write
    }
}

extension AnimatableProperty where Target == Layer {
    /// `Layer.opacity`, one component (the layer clamps it to 0...1, so a spring's overshoot is cut off).
    public static var opacity: Self {
        Self(name: "opacity", componentCount: 1, read: { [$0.opacity] }, write: { $0.opacity = $1[0] })
    }

    /// The frame's origin (x, y) in the parent's coordinates; written rounded to whole pixels, the size untouched.
    public static var position: Self {
        Self(name: "position", componentCount: 2,
             read: { [Double($0.frame.x), Double($0.frame.y)] },
             write: { layer, value in
                 var frame = layer.frame
                 frame.x = wholePixels(value[0], keeping: frame.x)
                 frame.y = wholePixels(value[1], keeping: frame.y)
                 layer.frame = frame
             })
    }

    /// `transform.scaleX` and `transform.scaleY`.
    public static var scale: Self {
        Self(name: "scale", componentCount: 2,
             read: { [$0.transform.scaleX, $0.transform.scaleY] },
             write: { layer, value in
                 var transform = layer.transform
                 transform.scaleX = value[0]
                 transform.scaleY = value[1]
                 layer.transform = transform
             })
    }

    /// `transform.rotation`, radians.
    public static var rotation: Self {
        Self(name: "rotation", componentCount: 1, read: { [$0.transform.rotation] }, write: { $0.transform.rotation = $1[0] })
    }

    /// `transform.translateX` and `transform.translateY`: moves pixels by fractions of a pixel too, unlike `position`.
    public static var translation: Self {
        Self(name: "translation", componentCount: 2,
             read: { [$0.transform.translateX, $0.transform.translateY] },
             write: { layer, value in
                 var transform = layer.transform
                 transform.translateX = value[0]
                 transform.translateY = value[1]
                 layer.transform = transform
             })
    }
}

/// `value` rounded to a pixel coordinate; a value no `Int` frame can hold (NaN, beyond ±2³¹) keeps `current`.
private func wholePixels(_ value: Double, keeping current: Int) -> Int {
    let rounded = value.rounded()
    guard rounded.isFinite, abs(rounded) <= Double(Int32.max) else { return current }
    return Int(rounded)
}
