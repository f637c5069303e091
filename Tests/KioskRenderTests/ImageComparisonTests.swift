import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

final class ImageComparisonTests: XCTestCase {
    private let size = Size(width: 4, height: 3)

    private func solid(_ b: UInt8, _ g: UInt8, _ r: UInt8, stride: Int = 16, padding: UInt8 = 0) -> [UInt8] {
        var bytes = [UInt8](repeating: padding, count: stride * 3)
        for y in 0..<3 { for x in 0..<4 { bytes.replaceSubrange((y * stride + x * 4)..<(y * stride + x * 4 + 4), with: [b, g, r, 0]) } }
        return bytes
    }

    func testIdenticalImagesMatch() {
        let a = solid(10, 20, 30)
        let diff = compareImages(a, a, size: size, strideA: 16, strideB: 16, tolerance: 0)
        XCTAssertEqual(diff, ImageDiff(differingPixels: 0, maxChannelDelta: 0, firstDifference: nil))
        XCTAssertTrue(diff.matches)
    }

    func testCountsPixelsBeyondTolerance() {
        let a = solid(10, 20, 30)
        var b = a
        b[1 * 16 + 2 * 4 + 1] = 30          // (2, 1) green +10
        b[2 * 16 + 0 * 4 + 2] = 33          // (0, 2) red +3
        b[2 * 16 + 3 * 4 + 0] = 0           // (3, 2) blue -10

        let strict = compareImages(a, b, size: size, strideA: 16, strideB: 16, tolerance: 0)
        XCTAssertEqual(strict.differingPixels, 3)
        XCTAssertEqual(strict.maxChannelDelta, 10)
        XCTAssertEqual(strict.firstDifference, ImageDiff.Location(x: 2, y: 1))

        let loose = compareImages(a, b, size: size, strideA: 16, strideB: 16, tolerance: 3)
        XCTAssertEqual(loose.differingPixels, 2)
        XCTAssertEqual(loose.firstDifference, ImageDiff.Location(x: 2, y: 1))

        let looser = compareImages(a, b, size: size, strideA: 16, strideB: 16, tolerance: 10)
        XCTAssertEqual(looser.differingPixels, 0)
        XCTAssertEqual(looser.maxChannelDelta, 10, "the largest delta is reported even when tolerated")
    }

    func testPaddingByteAndRowPaddingAreIgnored() {
        let a = solid(10, 20, 30, stride: 16)
        var b = solid(10, 20, 30, stride: 24, padding: 0xEE)
        for y in 0..<3 { for x in 0..<4 { b[y * 24 + x * 4 + 3] = 0xFF } }
        let diff = compareImages(a, b, size: size, strideA: 16, strideB: 24, tolerance: 0)
        XCTAssertTrue(diff.matches, "\(diff)")
    }

    func testVisiblyDifferentImageFails() throws {
        let scene = TestImage(width: 160, height: 120)
        scene.drawPattern(seed: 0)
        let white = TestImage(width: 160, height: 120, fill: 0xFF)
        let diff = scene.withBytes { drawn in
            white.withBytes { compareImages(drawn, $0, size: scene.size, strideA: scene.stride, strideB: white.stride, tolerance: 8) }
        }
        XCTAssertFalse(diff.matches)
        XCTAssertGreaterThan(diff.differingPixels, 160 * 120 * 9 / 10)
        XCTAssertEqual(diff.firstDifference, ImageDiff.Location(x: 0, y: 0))
        XCTAssertGreaterThan(diff.maxChannelDelta, 200)
    }
}
