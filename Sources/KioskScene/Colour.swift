/// An sRGB colour with straight (not premultiplied) alpha, components 0...1. An immutable value; any thread.
public struct Colour: Sendable, Equatable, CustomStringConvertible {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// A deliberately short list: scenes are meant to use hex; names cover quick sketches.
    public static let named: [String: Colour] = [
        "black": Colour(hex: 0x000000), "white": Colour(hex: 0xFFFFFF), "red": Colour(hex: 0xFF0000),
        "green": Colour(hex: 0x008000), "blue": Colour(hex: 0x0000FF), "yellow": Colour(hex: 0xFFFF00),
        "cyan": Colour(hex: 0x00FFFF), "magenta": Colour(hex: 0xFF00FF), "orange": Colour(hex: 0xFFA500),
        "gray": Colour(hex: 0x808080), "grey": Colour(hex: 0x808080),
        "transparent": Colour(red: 0, green: 0, blue: 0, alpha: 0),
    ]

    init(hex: UInt32) {
        self.init(red: Double((hex >> 16) & 0xFF) / 255, green: Double((hex >> 8) & 0xFF) / 255, blue: Double(hex & 0xFF) / 255)
    }

    /// Parses `#RGB`, `#RRGGBB`, `#RRGGBBAA` or a name from `named`; nil for anything else.
    public init?(parsing text: String) {
        if let c = Colour.named[text.lowercased()] { self = c; return }
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

    public var description: String {
        let c = [red, green, blue, alpha].map { String(Int(($0 * 255).rounded()), radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }
        return "#" + c.joined()
    }
}
