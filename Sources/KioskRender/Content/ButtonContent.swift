import CCairo
import KioskCore

/// A push button: a rounded box with a centred one-line label, in one of three looks. The look is derived from the
/// one style, so a scene names a button's colours once:
/// - `pressed`: the fill (and border) 20 % darker and the label 1 px lower, as if pushed in;
/// - `disabled`: the fill and border desaturated to grey of the same lightness, and the label at 40 % opacity.
/// A label too long for the button is ellipsized at the end. A plain `Sendable` value, drawn on a render worker.
public struct ButtonContent: CairoDrawnContent, Hashable {
    public enum State: String, Hashable, Sendable, CaseIterable {
        case normal, pressed, disabled
    }

    public var label: String
    public var font: String
    public var textColor: Color
    public var fill: RectContent.Fill
    public var cornerRadius: Double
    public var border: RectContent.Border?
    public var state: State

    public init(label: String, font: String = "Sans Bold 20", textColor: Color = .white,
                fill: RectContent.Fill = .solid(Color(rgb: 0x2F6FDB)), cornerRadius: Double = 8,
                border: RectContent.Border? = nil, state: State = .normal) {
        self.label = label; self.font = font; self.textColor = textColor; self.fill = fill
        self.cornerRadius = cornerRadius; self.border = border; self.state = state
    }

    public var kind: String { "button" }

    public var isOpaque: Bool { RectContent(fill: fill, cornerRadius: cornerRadius, border: border).isOpaque }

    /// Share of each colour channel kept for the pressed look.
    static let pressedDarkening = 0.8
    /// Opacity of the disabled label.
    static let disabledLabelOpacity = 0.4

    /// The fill this state draws.
    public var effectiveFill: RectContent.Fill {
        switch state {
        case .normal: fill
        case .pressed: fill.mapColors(Self.darkened)
        case .disabled: fill.mapColors(Self.desaturated)
        }
    }

    public func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        try drawThroughLayerCanvas(into: surface, isCancelled: isCancelled)
    }

    package var drawDescription: String { "button \(quotedPrefix(label)) (\(state.rawValue))" }

    package func draw(on cr: OpaquePointer, size: Size, isCancelled: () -> Bool) throws {
        let box = Rect(size: size)
        var border = self.border
        var labelColor = textColor
        var labelBox = box
        switch state {
        case .normal:
            break
        case .pressed:
            border = border.map { RectContent.Border(width: $0.width, color: Self.darkened($0.color)) }
            labelBox.y += 1
        case .disabled:
            border = border.map { RectContent.Border(width: $0.width, color: Self.desaturated($0.color)) }
            labelColor.alpha *= Self.disabledLabelOpacity
        }
        let inset = Int((border?.width ?? 0).rounded(.up)) + Int(min(cornerRadius, Double(box.height) / 2) / 2)
        labelBox.x += inset
        labelBox.width = max(labelBox.width - 2 * inset, 1)
        let style = TextStyle(font: font, color: labelColor, alignment: .center, ellipsize: .end,
                              centersVertically: true, singleParagraph: true)
        try drawBox(cr, box: box, fill: effectiveFill, cornerRadius: cornerRadius, border: border, what: "button")
        guard !isCancelled() else { return }
        try TextBlock.draw(label, isMarkup: false, style: style, in: labelBox, on: cr, isCancelled: isCancelled)
    }

    static func darkened(_ color: Color) -> Color {
        Color(red: color.red * pressedDarkening, green: color.green * pressedDarkening,
              blue: color.blue * pressedDarkening, alpha: color.alpha)
    }

    /// Grey of the colour's luma (Rec. 601 weights).
    static func desaturated(_ color: Color) -> Color {
        let luma = 0.299 * color.red + 0.587 * color.green + 0.114 * color.blue
        return Color(red: luma, green: luma, blue: luma, alpha: color.alpha)
    }
}
