import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport

/// A PNG read back for checks: XRGB8888 pixels.
struct PNGFile {
    let pixels: [UInt8]
    let width: Int
    let height: Int

    init(contentsOf url: URL) throws {
        let png = try readPNG(path: url.path)
        pixels = png.pixels
        width = png.size.width
        height = png.size.height
    }

    /// 0xRRGGBB at (x, y).
    func rgb(x: Int, y: Int) -> UInt32 {
        let o = (y * width + x) * 4
        return UInt32(pixels[o + 2]) << 16 | UInt32(pixels[o + 1]) << 8 | UInt32(pixels[o])
    }

    /// Pixels whose colour differs from `other`'s at the same place (all of them when the sizes differ).
    func differingPixels(from other: PNGFile) -> Int {
        guard width == other.width, height == other.height else { return max(width * height, other.width * other.height) }
        return pixels.withUnsafeBytes { a in
            other.pixels.withUnsafeBytes { b in
                compareImages(a, b, size: Size(width: width, height: height), strideA: width * 4, strideB: width * 4, tolerance: 0).differingPixels
            }
        }
    }

    /// Pixels in the rectangle (x0, y0, x1, y1), end exclusive, that satisfy `test`.
    func countPixels(in box: (Int, Int, Int, Int), where test: (UInt32) -> Bool) -> Int {
        var n = 0
        for y in box.1..<box.3 { for x in box.0..<box.2 where test(rgb(x: x, y: y)) { n += 1 } }
        return n
    }
}
