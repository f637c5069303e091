import CCairo
import KioskCore

/// A long single line of text rendered once into a strip as wide as the text; the ticker moves by animating the
/// layer's position, never by drawing again. Size the layer with `naturalSize()`. A plain `Sendable` value.
public struct TickerTextContent: CairoDrawnContent, Hashable {
    public var text: String
    public var font: String
    public var color: Color
    /// Empty space before and after the text, in pixels, so consecutive copies of the strip do not touch.
    public var padding: Int

    public init(_ text: String, font: String = "Sans 24", color: Color = .white, padding: Int = 0) {
        self.text = text; self.font = font; self.color = color; self.padding = padding
    }

    public var kind: String { "ticker" }

    /// The strip's size: the text's width plus both paddings, by one line's height. Measures with Pango on the
    /// calling thread, so call it where layout work belongs (a render worker), not on the main loop. Cairo limits
    /// images to 32767 pixels a side; a longer strip fails to draw.
    public func naturalSize() throws -> Size {
        let text = try TextBlock.naturalSize(self.text, isMarkup: false, style: style)
        return Size(width: text.width + 2 * max(padding, 0), height: text.height)
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "ticker content \(quotedPrefix(text))" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let inset = max(padding, 0)
        let box = Rect(x: inset, y: 0, width: max(size.width - 2 * inset, 1), height: size.height)
        try TextBlock.draw(text, isMarkup: false, style: style, in: box, on: cr, isCancelled: isCancelled)
    }

    private var style: TextStyle {
        TextStyle(font: font, color: color, alignment: .left, centersVertically: true, singleParagraph: true)
    }
}
