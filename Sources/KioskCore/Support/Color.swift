/// An sRGB colour with straight (not premultiplied) alpha, components 0...1: the one colour type of the scene model,
/// the layers and the renderers. A plain value; any thread.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red; self.green = green; self.blue = blue; self.alpha = alpha
    }

    /// `0xRRGGBB`, opaque.
    public init(rgb: UInt32, alpha: Double = 1) {
        self.init(red: Double((rgb >> 16) & 0xFF) / 255, green: Double((rgb >> 8) & 0xFF) / 255,
                  blue: Double(rgb & 0xFF) / 255, alpha: alpha)
    }

    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 1, green: 1, blue: 1)
    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)

    /// A deliberately short list: scenes are meant to use hex; names cover quick sketches.
    public static let named: [String: Color] = [
        "black": Color(rgb: 0x000000), "white": Color(rgb: 0xFFFFFF), "red": Color(rgb: 0xFF0000),
        "green": Color(rgb: 0x008000), "blue": Color(rgb: 0x0000FF), "yellow": Color(rgb: 0xFFFF00),
        "cyan": Color(rgb: 0x00FFFF), "magenta": Color(rgb: 0xFF00FF), "orange": Color(rgb: 0xFFA500),
        "gray": Color(rgb: 0x808080), "grey": Color(rgb: 0x808080),
        "transparent": Color(red: 0, green: 0, blue: 0, alpha: 0),
    ]

    /// Parses `#RGB`, `#RRGGBB`, `#RRGGBBAA` or a name from `named` (any case); nil for anything else.
    public init?(parsing text: String) {
        if let c = Color.named[text.lowercased()] { self = c; return }
        guard text.hasPrefix("#") else { return nil }
        let digits = Array(text.dropFirst())
        guard [3, 6, 8].contains(digits.count), digits.allSatisfy(\.isHexDigit) else { return nil }
        func byte(_ s: String) -> Double { Double(UInt8(s, radix: 16)!) / 255 }
        if digits.count == 3 {
            let v = digits.map { byte(String([$0, $0])) }
            self.init(red: v[0], green: v[1], blue: v[2])
        } else {
            let v = stride(from: 0, to: digits.count, by: 2).map { byte(String(digits[$0..<$0 + 2])) }
            self.init(red: v[0], green: v[1], blue: v[2], alpha: v.count == 4 ? v[3] : 1)
        }
    }

    /// `#rrggbbaa`.
    public var description: String {
        let c = [red, green, blue, alpha].map { String(Int(($0 * 255).rounded()), radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
        return "#" + c.joined()
    }
}
