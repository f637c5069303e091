/// Where one panel sits in a video wall of `columns` x `rows` panels of the same size: every member lays the scene
/// out on the wall's whole canvas and shows the part its panel covers, so a ticker or a video crossing panels is
/// one picture. The bezels (the frames between panels' pictures) are gaps in the canvas, in scene pixels: what
/// falls behind a bezel is not shown, as on a window looked at through glazing bars. A plain value.
public struct WallPlacement: Hashable, Sendable, CustomStringConvertible {
    public var columns: Int
    public var rows: Int
    /// This panel's column and row, from 0 at the wall's left and top.
    public var column: Int
    public var row: Int
    /// The gap between two panels' pictures, across (x) and down (y), in scene pixels.
    public var bezelX: Int
    public var bezelY: Int

    public init(columns: Int, rows: Int, column: Int, row: Int, bezelX: Int = 0, bezelY: Int = 0) {
        self.columns = columns
        self.rows = rows
        self.column = column
        self.row = row
        self.bezelX = bezelX
        self.bezelY = bezelY
    }

    /// The whole wall's canvas for panels showing `panel` scene pixels each (the output's scene size).
    public func canvas(panel: Size) -> Size {
        Size(width: columns * panel.width + (columns - 1) * bezelX, height: rows * panel.height + (rows - 1) * bezelY)
    }

    /// The part of the canvas this panel shows.
    public func viewport(panel: Size) -> Rect {
        Rect(x: column * (panel.width + bezelX), y: row * (panel.height + bezelY), width: panel.width, height: panel.height)
    }

    public var description: String {
        "column \(column + 1) of \(columns), row \(row + 1) of \(rows), bezel \(bezelX)x\(bezelY) px"
    }
}
