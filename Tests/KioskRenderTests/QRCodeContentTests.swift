import CQREncode
import Dispatch
import KioskCore
import KioskRender
import XCTest

final class QRCodeContentTests: XCTestCase {
    func testModulesMatchLibqrencodeAndFinderPatternsSitInThreeCorners() throws {
        let text = "https://example.com/kiosk?id=Lobby-4"
        let expected = try XCTUnwrap(QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1))
        defer { QRcode_free(expected) }
        let width = Int(expected.pointee.width)
        let content = QRCodeContent(text: text)
        XCTAssertEqual(content.kind, "qrcode")
        let size = Size(width: 240, height: 200)
        let surface = try render(content, size: size)
        let (moduleSize, square) = try XCTUnwrap(QRCodeContent.placement(symbolWidth: width, quietZone: 2, in: size))
        XCTAssertEqual(moduleSize, 200 / (width + 4), "the largest whole module size that fits")
        XCTAssertEqual(square.width, (width + 4) * moduleSize)
        XCTAssertEqual(square.x, (240 - square.width) / 2, "centred")

        // Sample every module's centre: dark exactly where libqrencode says so, and crisp (pure black or white).
        let left = square.x + 2 * moduleSize, top = square.y + 2 * moduleSize
        var mismatches = 0
        for y in 0..<width {
            for x in 0..<width {
                let isDark = expected.pointee.data[y * width + x] & 1 == 1
                let corner = surface.argb(left + x * moduleSize, top + y * moduleSize)
                let centre = surface.argb(left + x * moduleSize + moduleSize / 2, top + y * moduleSize + moduleSize / 2)
                let want = isDark ? (255, 0, 0, 0) : (255, 255, 255, 255)
                if !(centre == want && corner == want) { mismatches += 1 }
            }
        }
        XCTAssertEqual(mismatches, 0, "every module matches libqrencode's \(width)x\(width) grid")

        // Finder patterns: 7x7 dark ring, light ring, 3x3 dark core, at top-left, top-right and bottom-left only.
        func module(_ x: Int, _ y: Int) -> Bool {
            surface.argb(left + x * moduleSize + moduleSize / 2, top + y * moduleSize + moduleSize / 2).r == 0
        }
        func isFinder(atX ox: Int, y oy: Int) -> Bool {
            (0..<7).allSatisfy { y in (0..<7).allSatisfy { x in
                let ring = max(abs(x - 3), abs(y - 3))
                return module(ox + x, oy + y) == (ring != 2)
            } }
        }
        XCTAssertTrue(isFinder(atX: 0, y: 0))
        XCTAssertTrue(isFinder(atX: width - 7, y: 0))
        XCTAssertTrue(isFinder(atX: 0, y: width - 7))
        XCTAssertFalse(isFinder(atX: width - 7, y: width - 7), "no finder in the bottom-right corner")
        // The quiet zone is light, and outside the square the layer stays clear.
        XCTAssertTrue(surface.argb(square.x + 1, square.y + 1) == (255, 255, 255, 255))
        XCTAssertEqual(surface.argb(0, 100).a, 0)
    }

    func testColoursQuietZoneAndGolden() throws {
        let content = QRCodeContent(text: "kioskd", foreground: Color(rgb: 0x1B2A4A), background: Color(rgb: 0xF1F3F5),
                                    quietZone: 4)
        let symbol = try QRCodeContent.encode("kioskd")
        XCTAssertEqual(symbol.width, 21, "a short text is a version 1 symbol")
        let surface = try render(content, size: Size(width: 116, height: 116))
        XCTAssertTrue(surface.argb(3, 3) == (255, 0xF1, 0xF3, 0xF5), "quiet zone in the background colour")
        XCTAssertTrue(surface.argb(4 * 4 + 1, 4 * 4 + 1) == (255, 0x1B, 0x2A, 0x4A), "finder corner in the foreground")
        assertMatchesGolden(surface, name: "qrcode", tolerance: 0)  // crisp squares, no antialiasing: exact
    }

    func testTooLongEmptyAndTooSmallFailClearly() {
        let tooLong = String(repeating: "x", count: 3000)
        XCTAssertThrowsError(try render(QRCodeContent(text: tooLong), size: Size(width: 400, height: 400))) {
            XCTAssertTrue("\($0)".contains("too long for a QR code"), "\($0)")
            XCTAssertTrue("\($0)".contains("3000 bytes"), "\($0)")
        }
        XCTAssertThrowsError(try QRCodeContent.encode("")) { XCTAssertTrue("\($0)".contains("nothing to encode"), "\($0)") }
        XCTAssertThrowsError(try render(QRCodeContent(text: "hello"), size: Size(width: 20, height: 20))) {
            XCTAssertTrue("\($0)".contains("too small"), "\($0)")
        }
    }

    func testUTF8TextEncodesAsBytes() throws {
        let symbol = try QRCodeContent.encode("Café ☕ 欢迎")
        let reference = try XCTUnwrap(QRcode_encodeString("Café ☕ 欢迎", 0, QR_ECLEVEL_M, QR_MODE_8, 1))
        defer { QRcode_free(reference) }
        XCTAssertEqual(symbol.width, Int(reference.pointee.width))
        XCTAssertEqual(symbol.modules, (0..<(symbol.width * symbol.width)).map { reference.pointee.data[$0] & 1 == 1 })
    }
}
