import KioskCore
@testable import KioskRemote
import XCTest

/// Updates carry exactly the damaged pixels in the client's format; damage merges past its bound.
final class RFBEncoderTests: XCTestCase {
    /// A 4x2 frame whose pixel (x, y) is XRGB (0, x*10, y*10, x+y).
    private let size = Size(width: 4, height: 2)
    private var frame: [UInt8] {
        var bytes: [UInt8] = []
        for y in 0..<2 {
            for x in 0..<4 {
                let pixel: [UInt8] = [UInt8(x + y), UInt8(y * 10), UInt8(x * 10), 0]
                bytes += pixel
            }
        }
        return bytes
    }

    func testRawUpdateCopiesTheRectangleInTheServersFormat() {
        let update = RFBEncoder.update(frame: frame, size: size, rects: [Rect(x: 1, y: 1, width: 2, height: 1)], format: .xrgb8888)
        let header: [UInt8] = [0, 0, 0, 1, 0, 1, 0, 1, 0, 2, 0, 1, 0, 0, 0, 0]
        let pixels: [UInt8] = [2, 10, 10, 0, 3, 10, 20, 0]
        XCTAssertEqual(update, header + pixels)
        XCTAssertEqual(RFBEncoder.rawSize(of: [Rect(x: 1, y: 1, width: 2, height: 1)], in: size), update.count)
    }

    func testOtherChannelLayoutsAndClipping() {
        // vncdotool's RGBX: red at bit 0, blue at bit 16, little-endian; a rectangle half off screen is clipped.
        let rgbx = RFBPixelFormat(bitsPerPixel: 32, depth: 24, bigEndian: false, trueColour: true, redMax: 255, greenMax: 255,
                                  blueMax: 255, redShift: 0, greenShift: 8, blueShift: 16)
        let update = RFBEncoder.update(frame: frame, size: size, rects: [Rect(x: 3, y: 1, width: 5, height: 5)], format: rgbx)
        XCTAssertEqual(Array(update.suffix(4)), [30, 10, 4, 0])
        XCTAssertEqual(update.count, 4 + 12 + 4)
        var big = rgbx
        big.bigEndian = true
        XCTAssertEqual(Array(RFBEncoder.update(frame: frame, size: size, rects: [Rect(x: 3, y: 1, width: 1, height: 1)], format: big).suffix(4)), [0, 4, 10, 30])
    }

    func testDamageMergesPastItsBoundAndIsTakenByArea() {
        var damage = RFBDamage()
        for i in 0..<(RFBDamage.maxRects + 1) { damage.add(Rect(x: i * 10, y: 0, width: 5, height: 5)) }
        XCTAssertEqual(damage.rects, [Rect(x: 0, y: 0, width: RFBDamage.maxRects * 10 + 5, height: 5)])
        damage.add(Rect(x: 1, y: 1, width: 2, height: 2))
        XCTAssertEqual(damage.rects.count, 1, "a rectangle inside another adds nothing")
        XCTAssertEqual(damage.take(in: Rect(x: 0, y: 0, width: 50, height: 50)), [Rect(x: 0, y: 0, width: 50, height: 5)])
        XCTAssertFalse(damage.isEmpty, "what lies outside the area stays")
        XCTAssertEqual(damage.take(in: Rect(x: 0, y: 0, width: 1000, height: 50)).count, 1)
        XCTAssertTrue(damage.isEmpty)
    }
}
