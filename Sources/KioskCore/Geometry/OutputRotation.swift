/// How the scene is turned to fit the panel: a portrait kiosk on a landscape panel, or a panel mounted upside down.
/// Degrees clockwise, as the viewer facing the panel sees it: at 90 what is drawn at the scene's top ends up along
/// the panel's right edge and the scene's left edge along the panel's top; at 180 the scene is upside down; at 270
/// the scene's top is along the panel's left edge. A plain value.
///
/// Layers are laid out in scene coordinates (`sceneSize(forPanel:)`: width and height swapped at 90 and 270); only
/// the compositor knows about the panel's (physical) coordinates, where scanout buffers, damage clips and
/// snapshots live.
public enum OutputRotation: Int, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case degrees0 = 0
    case degrees90 = 90
    case degrees180 = 180
    case degrees270 = 270

    /// The values `init(parsing:)` accepts, for error messages.
    public static let allowedValues = "0, 90, 180, 270"

    public init?(degrees: Int) { self.init(rawValue: degrees) }

    /// Parses "0", "90", "180" or "270" (as a command-line option or a board file gives it).
    public init?(parsing text: String) {
        guard let degrees = Int(text) else { return nil }
        self.init(rawValue: degrees)
    }

    public var degrees: Int { rawValue }
    public var description: String { "\(rawValue)" }

    /// Whether the scene's width runs along the panel's height.
    public var swapsAxes: Bool { self == .degrees90 || self == .degrees270 }

    /// The size layers are laid out in, for a panel (mode) of `panel`.
    public func sceneSize(forPanel panel: Size) -> Size {
        swapsAxes ? Size(width: panel.height, height: panel.width) : panel
    }

    /// Where the scene pixel rectangle `rect` lands on the panel, for a scene of `scene`. Exact for integer
    /// rectangles: every scene pixel maps to exactly one panel pixel.
    public func panelRect(_ rect: Rect, sceneSize scene: Size) -> Rect {
        switch self {
        case .degrees0:
            return rect
        case .degrees90:
            return Rect(x: scene.height - rect.maxY, y: rect.x, width: rect.height, height: rect.width)
        case .degrees180:
            return Rect(x: scene.width - rect.maxX, y: scene.height - rect.maxY, width: rect.width, height: rect.height)
        case .degrees270:
            return Rect(x: rect.y, y: scene.width - rect.maxX, width: rect.height, height: rect.width)
        }
    }

    /// The scene rectangle that lands on the panel rectangle `rect` (the inverse of `panelRect`).
    public func sceneRect(_ rect: Rect, sceneSize scene: Size) -> Rect {
        inverse.panelRect(rect, sceneSize: sceneSize(forPanel: scene))
    }

    /// The rotation that turns the panel back into the scene.
    public var inverse: OutputRotation { OutputRotation(rawValue: (360 - rawValue) % 360)! }

    /// Scene coordinates to panel coordinates, as an affine transform (`x' = a x + c y + tx`, `y' = b x + d y + ty`).
    public func sceneToPanel(sceneSize scene: Size) -> AffineTransform {
        let w = Double(scene.width), h = Double(scene.height)
        switch self {
        case .degrees0: return .identity
        case .degrees90: return AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: h, ty: 0)
        case .degrees180: return AffineTransform(a: -1, b: 0, c: 0, d: -1, tx: w, ty: h)
        case .degrees270: return AffineTransform(a: 0, b: -1, c: 1, d: 0, tx: 0, ty: w)
        }
    }
}
