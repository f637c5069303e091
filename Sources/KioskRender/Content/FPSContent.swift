import CCairo
import KioskCore

/// Frame statistics ("60 fps · 16.7 ms", and the dropped-frame count when there are any) on a translucent dark
/// rounded panel. Built from plain numbers the main thread already has, drawn on a render worker.
public struct FPSContent: CairoDrawnContent, Hashable {
    public var framesPerSecond: Double
    /// Time to produce one frame, in milliseconds.
    public var frameMilliseconds: Double
    public var droppedFrames: Int
    public var textColor: Color
    public var panelColor: Color

    public init(framesPerSecond: Double, frameMilliseconds: Double, droppedFrames: Int = 0,
                textColor: Color = .white, panelColor: Color = Color(red: 0, green: 0, blue: 0, alpha: 0.6)) {
        self.framesPerSecond = framesPerSecond; self.frameMilliseconds = frameMilliseconds
        self.droppedFrames = droppedFrames; self.textColor = textColor; self.panelColor = panelColor
    }

    public var kind: String { "fps" }

    /// The line the widget shows.
    public var text: String {
        let fps = framesPerSecond.isFinite ? Int(max(framesPerSecond, 0).rounded()) : 0
        var line = "\(fps) fps · \(oneDecimal(frameMilliseconds)) ms"
        if droppedFrames > 0 { line += " · \(droppedFrames) dropped" }
        return line
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "fps widget" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let inset = max(size.height / 4, 2)
        let box = Rect(x: inset, y: 0, width: max(size.width - 2 * inset, 1), height: size.height)
        var style = TextStyle(font: Self.font(pixelSize: max(size.height * 11 / 20, 6)), color: textColor,
                              alignment: .center, ellipsize: .end, centersVertically: true, tabularDigits: true,
                              singleParagraph: true)
        // The numbers matter more than the size: shrink a line that does not fit rather than cut it off.
        let natural = try TextBlock.naturalSize(text, isMarkup: false, style: style)
        if natural.width > box.width {
            style.font = Self.font(pixelSize: max(size.height * 11 / 20 * box.width / natural.width, 6))
        }
        addRoundedRectangle(cr, x: 0, y: 0, width: Double(size.width), height: Double(size.height),
                            radius: Double(size.height) / 4)
        setSource(cr, panelColor)
        cairo_fill(cr)
        try TextBlock.draw(text, isMarkup: false, style: style, in: box, on: cr, isCancelled: isCancelled)
    }

    private static func font(pixelSize: Int) -> String { "Monospace Bold \(pixelSize)" }
}
