import KioskCore

/// The `wall:` section (top level for the kiosk's output, or in an `outputs:` entry for that output): this panel's
/// place in a video wall of panels of the same size, and the bezels between their pictures, in pixels or in
/// millimetres with the panel's picture size (`panel_mm`). A plain value; `placement(panel:)` gives the pixels.
public struct WallSettings: Sendable, Equatable {
    public static let keys = ["columns", "rows", "column", "row", "bezel", "panel_mm"]
    public static let bezelKeys = ["x", "y"]
    public static let panelKeys = ["width", "height"]
    /// At most this many panels across and down: a wall larger than this is a typing error more likely than a wall.
    public static let sideRange = 1...16
    /// A bezel of at most this many pixels or millimetres.
    public static let bezelRange = 0.0...1000.0

    /// A bezel's width, as the file gives it.
    public enum Length: Sendable, Equatable {
        case pixels(Int)
        case millimetres(Double)
    }

    public var columns = 1
    public var rows = 1
    public var column = 0
    public var row = 0
    public var bezelX = Length.pixels(0)
    public var bezelY = Length.pixels(0)
    /// The panel's picture, width and height in millimetres, as the scene sees it (after the output's rotation).
    public var panelMM: (width: Double, height: Double)?

    public init() {}

    public static func == (a: WallSettings, b: WallSettings) -> Bool {
        a.columns == b.columns && a.rows == b.rows && a.column == b.column && a.row == b.row && a.bezelX == b.bezelX
            && a.bezelY == b.bezelY && a.panelMM?.width == b.panelMM?.width && a.panelMM?.height == b.panelMM?.height
    }

    /// The placement for a panel showing `panel` scene pixels: millimetres become pixels at the panel's own density
    /// (its pixels across over its millimetres across, and down over down). The decoder has made sure `panel_mm` is
    /// there when a bezel is in millimetres.
    public func placement(panel: Size) -> WallPlacement {
        func pixels(_ length: Length, across: Bool) -> Int {
            switch length {
            case .pixels(let n): return n
            case .millimetres(let mm):
                guard let size = panelMM else { return 0 }
                let density = across ? Double(panel.width) / size.width : Double(panel.height) / size.height
                return Int((mm * density).rounded())
            }
        }
        return WallPlacement(columns: columns, rows: rows, column: column, row: row,
                             bezelX: pixels(bezelX, across: true), bezelY: pixels(bezelY, across: false))
    }
}
