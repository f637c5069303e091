import KioskCore
import KioskRender
import KioskScene

/// Conversions from the scene model's style values to what contents and layers take. Stateless; any thread.
enum StyleMapping {
    static func fill(_ f: Fill) -> RectContent.Fill {
        switch f {
        case .colour(let c): .solid(c)
        case .linearGradient(let colours, let angle): .linearGradient(colors: colours, angle: angle)
        }
    }

    /// A Pango font description ("Noto Sans Bold 22"): sizes are pixels, as TextContent takes them.
    static func font(_ font: Font?, inherited: Font) -> String {
        let family = font?.family ?? inherited.family ?? Font.defaultFamily
        let size = font?.size ?? inherited.size ?? 20
        let weight = font?.weight ?? inherited.weight ?? .normal
        let weightName: String = switch weight {
        case .thin: " Thin"
        case .light: " Light"
        case .normal: ""
        case .medium: " Medium"
        case .semibold: " Semi-Bold"
        case .bold: " Bold"
        case .heavy: " Heavy"
        }
        let sizeText = size == size.rounded() ? String(Int(size)) : String(size)
        return "\(family)\(weightName) \(sizeText)"
    }

    static func timing(_ easing: Easing) -> TimingFunction {
        switch easing {
        case .linear: .linear
        case .easeIn: .easeIn
        case .easeOut: .easeOut
        case .easeInOut: .easeInOut
        case .cubicBezier(let a, let b, let c, let d): .cubicBezier(a, b, c, d)
        }
    }

    /// `#RRGGBBAA` of a colour, as `widget.get` reports it.
    static func hex(_ c: Color) -> String {
        func byte(_ v: Double) -> String {
            let b = Int((min(max(v, 0), 1) * 255).rounded())
            let digits = String(b, radix: 16, uppercase: false)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "#" + byte(c.red) + byte(c.green) + byte(c.blue) + byte(c.alpha)
    }
}
