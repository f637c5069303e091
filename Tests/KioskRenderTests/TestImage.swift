import KioskCore
import KioskRender
import KioskRenderTestSupport

/// Test-owned XRGB8888 memory that stands in for a backend buffer. Lives on the test's thread.
final class TestImage {
    let size: Size
    let stride: Int
    let base: UnsafeMutableRawPointer

    init(width: Int, height: Int, stride: Int? = nil, fill: UInt8 = 0) {
        size = Size(width: width, height: height)
        self.stride = stride ?? width * 4
        base = UnsafeMutableRawPointer.allocate(byteCount: self.stride * height, alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: fill, count: self.stride * height)
    }

    deinit { base.deallocate() }

    /// Valid while this image is: pass it straight into the call that uses it.
    var buffer: PixelBuffer { PixelBuffer(index: 0, base: base, size: size, stride: stride) }
    var array: [UInt8] { withBytes { Array($0) } }

    /// The bytes of `rows` (all rows when nil), at this image's stride. Scoped, because a pointer taken from a
    /// property would not keep the image alive.
    func withBytes<R>(rows: Range<Int>? = nil, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let rows = rows ?? 0..<size.height
        return try body(UnsafeRawBufferPointer(start: base.advanced(by: rows.lowerBound * stride), count: rows.count * stride))
    }

    /// `compareImages` against `other` (same width), over `rows` or the whole image.
    func diff(_ other: TestImage, rows: Range<Int>? = nil, tolerance: UInt8 = 0) -> ImageDiff {
        let rows = rows ?? 0..<size.height
        return withBytes(rows: rows) { mine in
            other.withBytes(rows: rows) { theirs in
                compareImages(mine, theirs, size: Size(width: size.width, height: rows.count),
                              strideA: stride, strideB: other.stride, tolerance: tolerance)
            }
        }
    }

    /// (red, green, blue) of the pixel at (`x`, `y`).
    func rgb(_ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let p = base.advanced(by: y * stride + x * 4).assumingMemoryBound(to: UInt8.self)
        return (p[2], p[1], p[0])
    }
}

extension TestImage {
    /// Draws a picture that depends on `seed` everywhere: a colour gradient with a light band that moves with it.
    func drawPattern(seed: Int) {
        for y in 0..<size.height {
            for x in 0..<size.width {
                let p = base.advanced(by: y * stride + x * 4).assumingMemoryBound(to: UInt8.self)
                let inBand = (x + seed * 7) % 64 < 12
                p[0] = inBand ? 0xF0 : UInt8(truncatingIfNeeded: x * 3 + seed)
                p[1] = inBand ? 0xF0 : UInt8(truncatingIfNeeded: y * 5)
                p[2] = inBand ? 0xF0 : UInt8(truncatingIfNeeded: (x + y) * 2 + seed * 11)
                p[3] = 0xFF
            }
        }
    }
}
