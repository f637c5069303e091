import KioskCore
import KioskDisplay
import XCTest

final class FbdevPixelFormatTests: XCTestCase {
    /// vfb's layouts (drivers/video/fbdev/vfb.c): red in the low bits.
    private let bgr565 = FbdevPixelFormat(bitsPerPixel: 16, red: .init(offset: 0, length: 5), green: .init(offset: 5, length: 6),
                                          blue: .init(offset: 11, length: 5))
    private let xbgr8888 = FbdevPixelFormat(bitsPerPixel: 32, red: .init(offset: 0, length: 8), green: .init(offset: 8, length: 8),
                                            blue: .init(offset: 16, length: 8))
    private let rgb888 = FbdevPixelFormat(bitsPerPixel: 24, red: .init(offset: 16, length: 8), green: .init(offset: 8, length: 8),
                                          blue: .init(offset: 0, length: 8))

    func testRGB565PacksTheTopBitsOfEachChannel() {
        XCTAssertEqual(FbdevPixelFormat.rgb565.pack(0x00FF_0000), 0xF800, "red")
        XCTAssertEqual(FbdevPixelFormat.rgb565.pack(0x0000_FF00), 0x07E0, "green")
        XCTAssertEqual(FbdevPixelFormat.rgb565.pack(0x0000_00FF), 0x001F, "blue")
        XCTAssertEqual(FbdevPixelFormat.rgb565.pack(0xFFFF_FFFF), 0xFFFF, "white; the X byte is dropped")
        XCTAssertEqual(FbdevPixelFormat.rgb565.pack(0x0012_3456), (0x12 >> 3) << 11 | (0x34 >> 2) << 5 | 0x56 >> 3)
        XCTAssertEqual(bgr565.pack(0x00FF_0000), 0x001F, "red in the low bits")
        XCTAssertEqual(xbgr8888.pack(0x0011_2233), 0x0033_2211)
    }

    func testUnpackWidensSoFullIntensityStaysFull() {
        XCTAssertEqual(FbdevPixelFormat.rgb565.unpack(0xFFFF), 0x00FF_FFFF)
        XCTAssertEqual(FbdevPixelFormat.rgb565.unpack(0xF800), 0x00FF_0000)
        XCTAssertEqual(FbdevPixelFormat.rgb565.unpack(0x0000), 0)
        XCTAssertEqual(FbdevPixelFormat.rgb565.unpack(0x8410), 0x0084_8284, "the top bits repeat into the low ones")
        XCTAssertEqual(xbgr8888.unpack(0x0033_2211), 0x0011_2233)
        // Every 565 value survives a round trip: unpack then pack gives it back.
        for value in stride(from: UInt32(0), through: 0xFFFF, by: 7) {
            XCTAssertEqual(FbdevPixelFormat.rgb565.pack(FbdevPixelFormat.rgb565.unpack(value)), value)
        }
    }

    /// Converts `rect` of a 4x3 XRGB8888 image into a destination of `format` filled with 0xAA (rows padded to
    /// `stride`), and returns the destination bytes.
    private func convert(_ pixels: [UInt32], width: Int, rect: Rect, format: FbdevPixelFormat, stride: Int) -> [UInt8] {
        let height = pixels.count / width
        var destination = [UInt8](repeating: 0xAA, count: stride * height)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: width * 4, alignment: 16)
        defer { scratch.deallocate() }
        pixels.withUnsafeBytes { source in
            destination.withUnsafeMutableBytes { dst in
                format.convert(rect, from: source.baseAddress!, sourceStride: width * 4, to: dst.baseAddress!,
                               destinationStride: stride, scratch: scratch)
            }
        }
        return destination
    }

    func testConvertWritesOnlyTheRectangleInRGB565LittleEndian() {
        let image: [UInt32] = [
            0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0x00FF_FFFF,
            0x0000_0000, 0x0012_3456, 0x0080_8080, 0x00FF_0000,
            0x0000_FF00, 0x0000_00FF, 0x00FF_FFFF, 0x0000_0000,
        ]
        // 4 pixels of 2 bytes, padded to 10 bytes a row, as a framebuffer's line_length may be.
        let out = convert(image, width: 4, rect: Rect(x: 1, y: 1, width: 2, height: 2), format: .rgb565, stride: 10)
        func at(_ x: Int, _ y: Int) -> UInt16 { UInt16(out[y * 10 + x * 2]) | UInt16(out[y * 10 + x * 2 + 1]) << 8 }
        XCTAssertEqual(at(1, 1), FbdevPixelFormat.rgb565.pack(0x0012_3456).low16)
        XCTAssertEqual(at(2, 1), 0x8410)
        XCTAssertEqual(at(1, 2), 0x001F)
        XCTAssertEqual(at(2, 2), 0xFFFF)
        // Outside the rectangle (and the row padding) nothing was written.
        let written: Set<Int> = [12, 13, 14, 15, 22, 23, 24, 25]
        for (offset, byte) in out.enumerated() where !written.contains(offset) {
            XCTAssertEqual(byte, 0xAA, "byte \(offset) outside the damage")
        }
    }

    func testXRGB8888IsCopiedAsIsAndTwentyFourBitsArePacked() {
        let image: [UInt32] = [0x0011_2233, 0x0044_5566, 0x0077_8899, 0x00AA_BBCC]
        let copied = convert(image, width: 2, rect: Rect(x: 0, y: 0, width: 2, height: 2), format: .xrgb8888, stride: 8)
        XCTAssertEqual(copied, image.withUnsafeBytes { Array($0) })
        let packed = convert(image, width: 2, rect: Rect(x: 0, y: 0, width: 2, height: 2), format: rgb888, stride: 6)
        XCTAssertEqual(packed, [0x33, 0x22, 0x11, 0x66, 0x55, 0x44, 0x99, 0x88, 0x77, 0xCC, 0xBB, 0xAA])
        let swapped = convert(image, width: 2, rect: Rect(x: 1, y: 1, width: 1, height: 1), format: xbgr8888, stride: 8)
        XCTAssertEqual(Array(swapped[12..<16]), [0xAA, 0xBB, 0xCC, 0x00])
    }

    func testReadBackWidensAFramebufferToXRGB8888() {
        // A 2x1 RGB565 framebuffer with a 6-byte row: red, white.
        let framebuffer: [UInt8] = [0x00, 0xF8, 0xFF, 0xFF, 0xEE, 0xEE]
        let pixels = framebuffer.withUnsafeBytes {
            FbdevPixelFormat.rgb565.xrgb8888(from: $0.baseAddress!, size: Size(width: 2, height: 1), stride: 6)
        }
        XCTAssertEqual(pixels, [0x00, 0x00, 0xFF, 0x00, 0xFF, 0xFF, 0xFF, 0x00])
    }

    func testLayoutsKioskdCannotDriveAreNamed() {
        XCTAssertThrowsError(try FbdevPixelFormat(bitsPerPixel: 8, red: .init(offset: 0, length: 8), green: .init(offset: 0, length: 8),
                                                  blue: .init(offset: 0, length: 8), device: "/dev/fb0 (Virtual FB)")) { error in
            XCTAssertEqual("\(error)", "framebuffer /dev/fb0 (Virtual FB): 8 bits per pixel is not supported; kioskd needs true colour at 16, 24 or 32 bits per pixel (e.g. fbset -depth 32)")
        }
        XCTAssertThrowsError(try FbdevPixelFormat(bitsPerPixel: 16, red: .init(offset: 12, length: 5), green: .init(offset: 5, length: 6),
                                                  blue: .init(offset: 0, length: 5), device: "/dev/fb1 (st7789v)")) { error in
            XCTAssertEqual("\(error)", "framebuffer /dev/fb1 (st7789v): red channel at bit 12, 5 bits long, does not fit a 16-bit pixel")
        }
        XCTAssertEqual(try FbdevPixelFormat(bitsPerPixel: 16, red: .init(offset: 11, length: 5), green: .init(offset: 5, length: 6),
                                            blue: .init(offset: 0, length: 5), device: "x"), .rgb565)
        XCTAssertEqual("\(FbdevPixelFormat.rgb565)", "RGB565")
        XCTAssertEqual("\(bgr565)", "16 bpp r0:5 g5:6 b11:5")
    }

    func testRefreshComesFromThePixelClockElseSixtyHertz() throws {
        // The VESA 640x480@60 entry of the kernel's modedb, which vfb uses.
        let vesa = FbdevTiming(pixclockPs: 39721, xres: 640, leftMargin: 40, rightMargin: 24, hsyncLen: 96,
                               yres: 480, upperMargin: 32, lowerMargin: 11, vsyncLen: 2)
        XCTAssertEqual(try XCTUnwrap(vesa.refreshRate), 59.94, accuracy: 0.01)
        XCTAssertEqual(vesa.mode.description, "640x480@60")
        var interlaced = vesa
        interlaced.isInterlaced = true
        XCTAssertEqual(try XCTUnwrap(interlaced.refreshRate), 119.88, accuracy: 0.02)
        let spiPanel = FbdevTiming(pixclockPs: 0, xres: 240, yres: 320)
        XCTAssertNil(spiPanel.refreshRate)
        XCTAssertEqual(spiPanel.mode, OutputMode(width: 240, height: 320, refreshRate: 60, isPreferred: true))
        XCTAssertNil(FbdevTiming(pixclockPs: 1, xres: 640, yres: 480).refreshRate, "an implausible rate is ignored")
    }
}

private extension UInt32 {
    var low16: UInt16 { UInt16(truncatingIfNeeded: self) }
}
