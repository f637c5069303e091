import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

extension TestImage {
    /// This image as scanout buffer `index` (TestImage.buffer is always index 0).
    func buffer(index: Int) -> PixelBuffer {
        PixelBuffer(index: index, base: base, size: size, stride: stride)
    }

    /// Compares this image with a compositor snapshot (stride = width * 4).
    func diff(snapshot: [UInt8], tolerance: UInt8 = 0) -> ImageDiff {
        withBytes { mine in
            snapshot.withUnsafeBytes { theirs in
                compareImages(mine, theirs, size: size, strideA: stride, strideB: size.width * 4, tolerance: tolerance)
            }
        }
    }
}

/// A layer surface with every pixel set to the premultiplied ARGB word `argb`.
func solidSurface(_ size: Size, argb: UInt32, isOpaque: Bool? = nil) -> LayerSurface {
    let surface = LayerSurface(size: size, isOpaque: isOpaque ?? (argb >> 24 == 0xFF))
    surface.bytes.initializeMemory(as: UInt32.self, repeating: argb, count: size.width * size.height)
    return surface
}

/// (red, green, blue) of pixel (`x`, `y`) in an XRGB8888 snapshot `width` pixels wide.
func rgb(_ snapshot: [UInt8], width: Int, _ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
    let i = (y * width + x) * 4
    return (snapshot[i + 2], snapshot[i + 1], snapshot[i])
}

func assertRGB(
    _ actual: (r: UInt8, g: UInt8, b: UInt8), _ expected: (r: Int, g: Int, b: Int), tolerance: Int = 0,
    _ message: String = "", file: StaticString = #filePath, line: UInt = #line
) {
    let ok = abs(Int(actual.r) - expected.r) <= tolerance && abs(Int(actual.g) - expected.g) <= tolerance
        && abs(Int(actual.b) - expected.b) <= tolerance
    XCTAssertTrue(ok, "got \(actual), expected \(expected) ±\(tolerance) \(message)", file: file, line: line)
}

extension LayerSurface {
    /// Pixels with any coverage, and the bounding box of them (nil when nothing was drawn).
    var coverage: (count: Int, bounds: Rect?) {
        var count = 0, minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        for y in 0..<size.height {
            for x in 0..<size.width where pixel(x: x, y: y) >> 24 != 0 {
                count += 1
                minX = min(minX, x); minY = min(minY, y); maxX = max(maxX, x); maxY = max(maxY, y)
            }
        }
        guard count > 0 else { return (0, nil) }
        return (count, Rect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1))
    }

    /// Pixels with coverage in `rows` × `columns`.
    func coveredPixels(rows: Range<Int>? = nil, columns: Range<Int>? = nil) -> Int {
        var count = 0
        for y in rows ?? 0..<size.height {
            for x in columns ?? 0..<size.width where pixel(x: x, y: y) >> 24 != 0 { count += 1 }
        }
        return count
    }

    /// Unpremultiplied (alpha, red, green, blue) of a pixel.
    func argb(_ x: Int, _ y: Int) -> (a: Int, r: Int, g: Int, b: Int) {
        let p = pixel(x: x, y: y)
        return (Int(p >> 24), Int((p >> 16) & 0xFF), Int((p >> 8) & 0xFF), Int(p & 0xFF))
    }
}

/// Draws `content` into a fresh surface of `size`.
func render(_ content: any LayerContent, size: Size) throws -> LayerSurface {
    let surface = LayerSurface(size: size, isOpaque: content.isOpaque)
    try content.draw(into: surface, isCancelled: { false })
    return surface
}
