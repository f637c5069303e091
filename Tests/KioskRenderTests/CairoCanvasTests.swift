import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

final class CairoCanvasTests: XCTestCase {
    func testFillWritesXRGB8888Bytes() throws {
        let image = TestImage(width: 4, height: 2)
        try CairoCanvas.withCanvas(on: image.buffer) { canvas in
            canvas.fill(Color(rgb: 0x102030))
            canvas.fill(Rect(x: 1, y: 1, width: 2, height: 1), color: Color(rgb: 0xFF8000))
        }
        // Little-endian XRGB8888: blue, green, red, padding.
        XCTAssertEqual(image.withBytes { Array($0[0..<3]) }, [0x30, 0x20, 0x10])
        XCTAssertTrue(image.rgb(1, 1) == (0xFF, 0x80, 0x00))
        XCTAssertTrue(image.rgb(3, 1) == (0x10, 0x20, 0x30))
    }

    func testInvalidSizesAndStridesThrowInsteadOfCrashing() {
        let image = TestImage(width: 64, height: 64)
        let cases: [(Size, Int, String)] = [
            (Size(width: 0, height: 10), 256, "invalid size"),
            (Size(width: 10, height: 0), 256, "invalid size"),
            (Size(width: -5, height: 10), 256, "invalid size"),
            (Size(width: 64, height: 64), 0, "invalid stride"),
            (Size(width: 64, height: 64), -256, "invalid stride"),
            (Size(width: 64, height: 64), 100, "stride"),   // Cairo: too small for 64 pixels
            (Size(width: 16, height: 16), 66, "stride"),    // Cairo: not a multiple of 4
        ]
        for (size, stride, expected) in cases {
            XCTAssertThrowsError(try CairoCanvas.withCanvas(base: image.base, size: size, stride: stride) { _ in
                XCTFail("\(size) stride \(stride): body must not run")
            }) { error in
                XCTAssertTrue("\(error)".contains("canvas \(size)"), "\(error)")
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        XCTAssertThrowsError(try CairoCanvas(size: Size(width: 0, height: 0)))
    }

    func testEscapedCanvasCannotTouchBorrowedMemory() throws {
        let image = TestImage(width: 8, height: 8)
        let escaped = try CairoCanvas.withCanvas(on: image.buffer) { canvas in
            canvas.fill(.white)
            return canvas
        }
        escaped.fill(Color(rgb: 0xFF0000))
        XCTAssertTrue(image.rgb(4, 4) == (255, 255, 255), "drawing after the scope must not reach the buffer")
        XCTAssertThrowsError(try escaped.withPixels { _ in () })
        XCTAssertThrowsError(try escaped.checkStatus(), "Cairo reports the finished surface")
    }

    func testBodyErrorPropagatesAndSurfaceIsFinished() {
        struct Expected: Error {}
        let image = TestImage(width: 8, height: 8)
        var kept: CairoCanvas?
        XCTAssertThrowsError(try CairoCanvas.withCanvas(on: image.buffer) { canvas in
            kept = canvas
            throw Expected()
        }) { XCTAssertTrue($0 is Expected) }
        kept?.fill(.white)
        XCTAssertTrue(image.rgb(0, 0) == (0, 0, 0))
    }

    func testOwnedCanvasStartsBlackAndExposesPixels() throws {
        let canvas = try CairoCanvas(size: Size(width: 5, height: 3))
        XCTAssertGreaterThanOrEqual(canvas.stride, 20)
        let blackAtStart = try canvas.withPixels { bytes in
            compareImages(Array(bytes), [UInt8](repeating: 0, count: 20 * 3), size: canvas.size,
                          strideA: canvas.stride, strideB: 20, tolerance: 0)
        }
        XCTAssertTrue(blackAtStart.matches, "\(blackAtStart)")
        canvas.fill(Rect(x: 4, y: 2, width: 1, height: 1), color: Color(rgb: 0x00FF00))
        let pixel = try canvas.withPixels { bytes in Array(bytes[(2 * canvas.stride + 16)..<(2 * canvas.stride + 19)]) }
        XCTAssertEqual(pixel, [0x00, 0xFF, 0x00])
        try canvas.checkStatus()
    }
}
