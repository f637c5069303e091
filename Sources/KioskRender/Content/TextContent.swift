import CCairo
import KioskCore

/// A block of text set with Pango: plain text or Pango markup, a font description such as "Sans Bold 24" (sizes
/// are pixels), a wrap mode, an ellipsis position, a line limit, optional shrinking to fit and optional vertical
/// centring. A plain `Sendable` value; the layout is made and drawn inside `draw`, on the render worker.
public struct TextContent: CairoDrawnContent, Hashable {
    /// Where lines sit horizontally. Pango picks each paragraph's direction from its first strong character and
    /// mirrors the alignment for right-to-left paragraphs (as CSS `start`/`end` do): `.left` is the start of the
    /// line, so Arabic or Hebrew set `.left` hugs the right edge.
    public enum Alignment: String, Hashable, Sendable, CaseIterable {
        case left, center, right
    }

    /// How lines break to fit the layer's width (Pango's `PangoWrapMode`).
    public enum Wrap: String, Hashable, Sendable, CaseIterable {
        /// Each paragraph stays one line; it runs past the edge unless it is ellipsized or shrunk.
        case none
        /// At word boundaries (PANGO_WRAP_WORD).
        case word
        /// Between any two characters (PANGO_WRAP_CHAR).
        case char
        /// At word boundaries, falling back to characters for a word longer than the line (PANGO_WRAP_WORD_CHAR).
        case wordChar
    }

    /// Where text that does not fit is shortened with "…" (Pango's `PangoEllipsizeMode`). With wrapping, the last
    /// line that fits (by `maxLines` or the layer's height) is the one shortened.
    public enum Ellipsize: String, Hashable, Sendable, CaseIterable {
        case none, start, middle, end
    }

    public var text: String
    /// `text` is Pango markup (`<b>bold</b>`); invalid markup makes `draw` throw.
    public var isMarkup: Bool
    public var font: String
    public var color: Color
    public var alignment: Alignment
    public var wrap: Wrap
    public var ellipsize: Ellipsize
    public var maxLines: Int?
    public var centersVertically: Bool
    /// Reduce the font size until the text fits the layer's width, height and `maxLines` without an ellipsis, down
    /// to 30 % of the asked-for size (never below 6 px); what still does not fit at that size is ellipsized or cut
    /// off. Sizes set inside markup (`<span size=...>`) are not scaled.
    public var shrinksToFit: Bool

    /// Break lines to fit the layer's width (`wrap != .none`); setting it true picks word wrapping.
    public var wraps: Bool {
        get { wrap != .none }
        set { wrap = newValue ? (wrap == .none ? .word : wrap) : .none }
    }

    /// End what does not fit with "…" (`ellipsize != .none`); setting it true ellipsizes at the end.
    public var ellipsizes: Bool {
        get { ellipsize != .none }
        set { ellipsize = newValue ? (ellipsize == .none ? .end : ellipsize) : .none }
    }

    /// The original form: `wraps` is word wrapping, `ellipsizes` an ellipsis at the end.
    public init(
        _ text: String, isMarkup: Bool = false, font: String = "Sans 16", color: Color = .white,
        alignment: Alignment = .left, wraps: Bool = true, ellipsizes: Bool = true, maxLines: Int? = nil,
        centersVertically: Bool = false, shrinksToFit: Bool = false
    ) {
        self.init(text, isMarkup: isMarkup, font: font, color: color, alignment: alignment,
                  wrap: wraps ? .word : .none, ellipsize: ellipsizes ? .end : .none, maxLines: maxLines,
                  centersVertically: centersVertically, shrinksToFit: shrinksToFit)
    }

    /// `wrap` has no default so that calls without it keep meaning the form above.
    public init(
        _ text: String, isMarkup: Bool = false, font: String = "Sans 16", color: Color = .white,
        alignment: Alignment = .left, wrap: Wrap, ellipsize: Ellipsize = .end, maxLines: Int? = nil,
        centersVertically: Bool = false, shrinksToFit: Bool = false
    ) {
        self.text = text; self.isMarkup = isMarkup; self.font = font; self.color = color
        self.alignment = alignment; self.wrap = wrap; self.ellipsize = ellipsize; self.maxLines = maxLines
        self.centersVertically = centersVertically; self.shrinksToFit = shrinksToFit
    }

    public var kind: String { "text" }

    /// The size `text` needs in `font` (pixels, rounded up): one unbounded line per paragraph, or wrapped with
    /// `wrap` to `maxWidth` when given. Lays out with Pango on a scratch surface of its own, so any thread may call
    /// it; it costs a layout, so keep it off the main loop where the text is long. Invalid markup is measured as the
    /// literal text (drawing it reports the error).
    public static func measure(
        _ text: String, isMarkup: Bool, font: String, maxWidth: Int?, wrap: Wrap = .word
    ) -> Size {
        let style = TextStyle(font: font, color: .white, wrap: maxWidth == nil ? .none : wrap)
        let width = maxWidth.map { max($0, 1) }
        if let size = try? TextBlock.measure(text, isMarkup: isMarkup, style: style, maxWidth: width) { return size }
        return (try? TextBlock.measure(text, isMarkup: false, style: style, maxWidth: width)) ?? Size(width: 0, height: 0)
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "text content \(quotedPrefix(text))" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        try TextBlock.draw(text, isMarkup: isMarkup, style: style, in: Rect(size: size), on: cr, isCancelled: isCancelled)
    }

    var style: TextStyle {
        TextStyle(font: font, color: color, alignment: alignment, wrap: wrap, ellipsize: ellipsize, maxLines: maxLines,
                  centersVertically: centersVertically, shrinksToFit: shrinksToFit)
    }

    /// What Pango makes of this text in a layer of `size`, laid out exactly as `draw` would (tests, diagnostics).
    func layoutReport(size: Size) throws -> TextLayoutReport {
        try TextBlock.report(text, isMarkup: isMarkup, style: style, in: Rect(size: size))
    }
}
