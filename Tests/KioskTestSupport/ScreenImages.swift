import KioskCore

/// Screens as `screenshot()` gives them (XRGB8888 rows, stride = width * 4), compared in tests.
public enum ScreenImages {
    /// The rectangle `rect` of an image `width` pixels wide.
    public static func crop(_ image: [UInt8], width: Int, to rect: Rect) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(rect.width * rect.height * 4)
        for y in rect.y..<(rect.y + rect.height) {
            let start = (y * width + rect.x) * 4
            out += image[start..<(start + rect.width * 4)]
        }
        return out
    }

    /// Pixels whose colour differs (the X byte ignored); images of different sizes differ everywhere.
    public static func differing(_ a: [UInt8], _ b: [UInt8]) -> Int {
        guard a.count == b.count else { return max(a.count, b.count) / 4 }
        var n = 0
        for i in stride(from: 0, to: a.count, by: 4) where a[i] != b[i] || a[i + 1] != b[i + 1] || a[i + 2] != b[i + 2] {
            n += 1
        }
        return n
    }
}
