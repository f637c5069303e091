import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

/// The fleet's thumbnails: reduced with a box filter to the width asked, the aspect ratio kept, never enlarged, and
/// a JPEG that libjpeg reads back with the colours of the screen.
final class JPEGThumbnailTests: XCTestCase {
    /// XRGB8888 (little-endian B, G, R, X) of `size`, `left` on the left half and `right` on the right.
    private func halves(_ size: Size, left: (UInt8, UInt8, UInt8), right: (UInt8, UInt8, UInt8)) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let (r, g, b) = x < size.width / 2 ? left : right
                let i = (y * size.width + x) * 4
                bytes[i] = b; bytes[i + 1] = g; bytes[i + 2] = r; bytes[i + 3] = 0xFF
            }
        }
        return bytes
    }

    private func assertColour(_ word: UInt32, _ expected: (UInt8, UInt8, UInt8), _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let got = [Int((word >> 16) & 0xFF), Int((word >> 8) & 0xFF), Int(word & 0xFF)]
        let want = [Int(expected.0), Int(expected.1), Int(expected.2)]
        XCTAssertTrue(zip(got, want).allSatisfy { abs($0 - $1) <= 10 }, "\(what): \(got), expected \(want) within 10", file: file, line: line)
    }

    func testA640By480ScreenBecomesA64By48JPEGWithItsColours() throws {
        let size = Size(width: 640, height: 480)
        let thumbnail = try encodeJPEGThumbnail(xrgb8888: halves(size, left: (200, 30, 40), right: (20, 60, 220)), size: size,
                                                stride: size.width * 4, maxWidth: 64)
        XCTAssertEqual(thumbnail.size, Size(width: 64, height: 48))
        XCTAssertEqual(Array(thumbnail.jpeg.prefix(2)), [0xFF, 0xD8], "a JPEG's start of image")
        let decoded = try readJPEG(thumbnail.jpeg)
        XCTAssertEqual(decoded.width, 64)
        XCTAssertEqual(decoded.height, 48)
        assertColour(decoded.pixels[24 * 64 + 8], (200, 30, 40), "left")
        assertColour(decoded.pixels[24 * 64 + 56], (20, 60, 220), "right")
    }

    /// Each pixel is the mean of those it covers: a fine checkerboard of black and white is grey, where dropping
    /// pixels would keep one or the other.
    func testPixelsAreAveragedNotDropped() throws {
        let size = Size(width: 400, height: 300)
        var bytes = [UInt8](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            for x in 0..<size.width where (x + y) % 2 == 0 {
                let i = (y * size.width + x) * 4
                bytes[i] = 255; bytes[i + 1] = 255; bytes[i + 2] = 255
            }
        }
        let thumbnail = try encodeJPEGThumbnail(xrgb8888: bytes, size: size, stride: size.width * 4, maxWidth: 40)
        XCTAssertEqual(thumbnail.size, Size(width: 40, height: 30))
        let decoded = try readJPEG(thumbnail.jpeg)
        assertColour(decoded.pixels[15 * 40 + 20], (128, 128, 128), "a checkerboard averaged")
    }

    func testASmallScreenIsNotEnlargedAndBadInputIsNamed() throws {
        let size = Size(width: 64, height: 48)
        let thumbnail = try encodeJPEGThumbnail(xrgb8888: halves(size, left: (0, 0, 0), right: (255, 255, 255)), size: size,
                                                stride: size.width * 4, maxWidth: 320)
        XCTAssertEqual(thumbnail.size, size)
        XCTAssertThrowsError(try encodeJPEGThumbnail(xrgb8888: [0, 0, 0], size: size, stride: size.width * 4, maxWidth: 32)) { error in
            XCTAssertTrue("\(error)".contains("3 bytes given"), "\(error)")
        }
        XCTAssertThrowsError(try encodeJPEGThumbnail(xrgb8888: [], size: Size(width: 0, height: 10), stride: 0, maxWidth: 32)) { error in
            XCTAssertTrue("\(error)".contains("thumbnail: invalid image"), "\(error)")
        }
    }
}
