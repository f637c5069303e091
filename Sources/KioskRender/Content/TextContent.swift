import KioskCore

/// A block of text set with Pango: plain text or Pango markup, a font description such as "Sans Bold 24" (sizes
/// are pixels), word wrapping, ellipsizing at the end, a line limit and optional vertical centring. A plain
/// `Sendable` value; the layout is made and drawn inside `draw`, on the render worker.
public struct TextContent: LayerContent, Hashable {
    public enum Alignment: String, Hashable, Sendable, CaseIterable {
        case left, center, right
    }

    public var text: String
    /// `text` is Pango markup (`<b>bold</b>`); invalid markup makes `draw` throw.
    public var isMarkup: Bool
    public var font: String
    public var color: Color
    public var alignment: Alignment
    /// Break lines at word boundaries to fit the layer's width.
    public var wraps: Bool
    /// End what does not fit (in width, or past `maxLines` / the layer's height when wrapping) with "…".
    public var ellipsizes: Bool
    public var maxLines: Int?
    public var centersVertically: Bool

    public init(
        _ text: String, isMarkup: Bool = false, font: String = "Sans 16", color: Color = .white,
        alignment: Alignment = .left, wraps: Bool = true, ellipsizes: Bool = true, maxLines: Int? = nil,
        centersVertically: Bool = false
    ) {
        self.text = text; self.isMarkup = isMarkup; self.font = font; self.color = color
        self.alignment = alignment; self.wraps = wraps; self.ellipsizes = ellipsizes; self.maxLines = maxLines
        self.centersVertically = centersVertically
    }

    public var kind: String { "text" }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        let style = TextStyle(font: font, color: color, alignment: alignment, wraps: wraps, ellipsizes: ellipsizes,
                              maxLines: maxLines, centersVertically: centersVertically)
        try LayerCanvas.draw(into: surface, what: "text content \(quotedPrefix(text))") { cr in
            try TextBlock.draw(text, isMarkup: isMarkup, style: style, in: Rect(size: surface.size), on: cr,
                               isCancelled: isCancelled)
        }
    }
}
