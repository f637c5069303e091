/// Takes an absolute device position to scene coordinates: from the device's range (0...1) to the output's panel
/// pixels, then through the inverse of the output's rotation into the coordinates layers are laid out in (the
/// engine root's). A device whose calibration libinput did not apply (`DevicePosition.calibrated` false) gets
/// `calibration` applied first, as libinput would. A plain value.
public struct InputMapping: Sendable, Equatable {
    /// The output's mode size: the panel, in pixels.
    public var panel: Size
    public var rotation: OutputRotation
    public var calibration: CalibrationMatrix?
    /// The connector the device maps to, for `input` events.
    public var output: String

    public init(panel: Size, rotation: OutputRotation, calibration: CalibrationMatrix? = nil, output: String) {
        self.panel = panel
        self.rotation = rotation
        self.calibration = calibration
        self.output = output
    }

    /// The size layers are laid out in.
    public var sceneSize: Size { rotation.sceneSize(forPanel: panel) }

    /// The panel pixel position of a device position (a continuous coordinate: the pixel (3, 4) spans 3...4).
    public func panelPoint(_ position: DevicePosition) -> (x: Double, y: Double) {
        var (x, y) = (position.x, position.y)
        if !position.calibrated, let calibration { (x, y) = calibration.apply(x: x, y: y) }
        return (x * Double(panel.width), y * Double(panel.height))
    }

    /// The scene position of a device position, clamped to the scene so a touch on the panel's very edge (or a
    /// calibration that overshoots it) still lands on the edge widget.
    public func scenePoint(_ position: DevicePosition) -> (x: Double, y: Double) {
        let (px, py) = panelPoint(position)
        return scenePoint(panelX: px, panelY: py)
    }

    /// The scene position of a panel position (a pointer moved by relative motion), clamped to the scene.
    public func scenePoint(panelX px: Double, panelY py: Double) -> (x: Double, y: Double) {
        let scene = sceneSize
        let toScene = rotation.sceneToPanel(sceneSize: scene).inverted
        let (sx, sy) = toScene.apply(x: px, y: py)
        // Just inside the far edge: a position of exactly the width is past the last pixel.
        let maxX = Double(scene.width).nextDown, maxY = Double(scene.height).nextDown
        return (min(max(sx, 0), maxX), min(max(sy, 0), maxY))
    }
}

extension AffineTransform {
    /// The transform that undoes this one; nil when it squashes the plane to a line or a point.
    public var invertedIfPossible: AffineTransform? {
        let determinant = a * d - b * c
        guard abs(determinant) > Self.noise else { return nil }
        let ia = d / determinant, ib = -b / determinant, ic = -c / determinant, id = a / determinant
        return AffineTransform(a: ia, b: ib, c: ic, d: id, tx: -(ia * tx + ic * ty), ty: -(ib * tx + id * ty))
    }

    /// The inverse of a transform known to be invertible (a rotation by quarter turns, a translation).
    var inverted: AffineTransform { invertedIfPossible! }
}
