import CKioskJpeg
import Foundation
import KioskBench
import KioskCore
@testable import KioskRender
import XCTest

/// PNGs decode only the part shown, scaled down while decoding, and files over the pixel limit are refused unread.
final class BoundedImageDecodeTests: XCTestCase {
    private var directory: URL!
    private let red: [UInt8] = [255, 0, 0, 255], blue: [UInt8] = [0, 0, 255, 255]
    private let green: [UInt8] = [0, 255, 0, 255], white: [UInt8] = [255, 255, 255, 255]

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-bounded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ImageContent.purgeCache()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
        ImageContent.purgeCache()
    }

    private func write(_ png: QuadrantPNG, _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try png.write(to: path)
        return path
    }

    /// Premultiplied (a, r, g, b) of a pixel.
    private func argb(_ surface: LayerSurface, _ x: Int, _ y: Int) -> [Int] {
        let p = surface.pixel(x: x, y: y)
        return [Int(p >> 24), Int(p >> 16 & 0xFF), Int(p >> 8 & 0xFF), Int(p & 0xFF)]
    }

    private func assertNear(_ actual: [Int], _ expected: [Int], tolerance: Int = 2, _ message: String = "",
                            file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(zip(actual, expected).allSatisfy { abs($0 - $1) <= tolerance }, "got \(actual), expected \(expected) \(message)",
                      file: file, line: line)
    }

    // MARK: The plan

    func testPlanDecodesWhatTheFitShowsAtTheSizeShown() {
        // A poster in a small box: all of it, at the fitted size.
        let poster = ImageDecodePlan(image: Size(width: 12000, height: 12000), layer: Size(width: 400, height: 240), fit: .contain)
        XCTAssertEqual(poster.source, Rect(x: 0, y: 0, width: 12000, height: 12000))
        XCTAssertEqual(poster.decoded, Size(width: 240, height: 240))
        // Whole factors: never smaller than shown, under twice as large.
        let odd = ImageDecodePlan(image: Size(width: 1000, height: 1000), layer: Size(width: 300, height: 300), fit: .contain)
        XCTAssertEqual([odd.factorX, odd.factorY], [3, 3])
        XCTAssertEqual(odd.decoded, Size(width: 334, height: 334))
        // Cover crops the sides away before decoding.
        let cover = ImageDecodePlan(image: Size(width: 4000, height: 1000), layer: Size(width: 100, height: 100), fit: .cover)
        XCTAssertEqual(cover.source, Rect(x: 1500, y: 0, width: 1000, height: 1000))
        XCTAssertEqual(cover.decoded, Size(width: 100, height: 100))
        // At its own size, only what the layer shows.
        let none = ImageDecodePlan(image: Size(width: 1000, height: 800), layer: Size(width: 200, height: 100), fit: .none)
        XCTAssertEqual(none.source, Rect(x: 400, y: 350, width: 200, height: 100))
        XCTAssertEqual(none.decoded, Size(width: 200, height: 100))
        // Never scaled up while decoding: Cairo does that when it draws.
        let small = ImageDecodePlan(image: Size(width: 40, height: 20), layer: Size(width: 400, height: 200), fit: .fill)
        XCTAssertTrue(small.isWhole(Size(width: 40, height: 20)))
    }

    // MARK: Decoding

    func testDownscaledPNGKeepsEachQuadrantsColour() throws {
        let path = try write(QuadrantPNG(width: 640, height: 320, colours: [red, blue, green, white]), "quadrants.png")
        let surface = try render(ImageContent(path: path, fit: .fill), size: Size(width: 64, height: 32))
        XCTAssertEqual(argb(surface, 10, 5), [255, 255, 0, 0])
        XCTAssertEqual(argb(surface, 50, 5), [255, 0, 0, 255])
        XCTAssertEqual(argb(surface, 10, 25), [255, 0, 255, 0])
        XCTAssertEqual(argb(surface, 50, 25), [255, 255, 255, 255])
    }

    func testCoverDecodesOnlyTheMiddle() throws {
        // Four times as wide as tall: in a square, cover shows the middle half, where the quadrants meet.
        let path = try write(QuadrantPNG(width: 800, height: 200, colours: [red, blue, red, blue]), "wide.png")
        let surface = try render(ImageContent(path: path, fit: .cover), size: Size(width: 100, height: 100))
        XCTAssertEqual(argb(surface, 10, 50), [255, 255, 0, 0])
        XCTAssertEqual(argb(surface, 90, 50), [255, 0, 0, 255])
    }

    func testInterlacedPNGWithAlphaIsPremultiplied() throws {
        let halfRed: [UInt8] = [255, 0, 0, 128], clear: [UInt8] = [0, 0, 0, 0]
        let png = QuadrantPNG(width: 61, height: 37, colours: [halfRed, blue, clear, white], hasAlpha: true, interlaced: true)
        let path = try write(png, "interlaced.png")
        // At its own size and reduced: the same colours, premultiplied as Cairo keeps them.
        for size in [Size(width: 61, height: 37), Size(width: 20, height: 12)] {
            ImageContent.purgeCache()
            let surface = try render(ImageContent(path: path, fit: .fill), size: size)
            let w = size.width, h = size.height
            assertNear(argb(surface, w / 6, h / 6), [128, 128, 0, 0], "\(size)")
            assertNear(argb(surface, w - 2, h / 6), [255, 0, 0, 255], "\(size)")
            assertNear(argb(surface, w / 6, h - 2), [0, 0, 0, 0], "\(size)")
            assertNear(argb(surface, w - 2, h - 2), [255, 255, 255, 255], "\(size)")
        }
    }

    func testPosterOf12000SquarePixelsDecodesIntoASmallBox() throws {
        let path = try write(QuadrantPNG(width: 12000, height: 12000, colours: [red, blue, green, white]), "poster.png")
        XCTAssertLessThan(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? .max, 8 << 20)
        XCTAssertEqual(try ImageHeader.read(path: path), ImageHeader(format: .png, width: 12000, height: 12000))
        let surface = try render(ImageContent(path: path, fit: .contain), size: Size(width: 400, height: 240))
        // The 240x240 square sits in the middle: bands of 80 on either side stay transparent.
        XCTAssertEqual(argb(surface, 40, 120), [0, 0, 0, 0])
        XCTAssertEqual(argb(surface, 80 + 60, 60), [255, 255, 0, 0])
        XCTAssertEqual(argb(surface, 80 + 180, 60), [255, 0, 0, 255])
        XCTAssertEqual(argb(surface, 80 + 60, 180), [255, 0, 255, 0])
        XCTAssertEqual(argb(surface, 80 + 180, 180), [255, 255, 255, 255])
    }

    // MARK: The pixel limit

    func testImagesOverThePixelLimitAreRefusedNamingTheFileAndTheLimit() throws {
        let path = try write(QuadrantPNG(width: 64, height: 32, colours: [red, blue, green, white]), "big.png")
        XCTAssertNoThrow(try render(ImageContent(path: path, maxPixels: 2048), size: Size(width: 8, height: 8)))
        ImageContent.purgeCache()
        XCTAssertThrowsError(try render(ImageContent(path: path, maxPixels: 2047), size: Size(width: 8, height: 8))) {
            XCTAssertTrue("\($0)".contains(path), "\($0)")
            XCTAssertTrue("\($0)".contains("PNG of 64x32 pixels"), "\($0)")
            XCTAssertTrue("\($0)".contains("memory.max_image_pixels (2047"), "\($0)")
        }
    }

    func testJPEGHeadersAreReadForTheLimitToo() throws {
        let path = directory.appendingPathComponent("photo.jpg").path
        var message = [CChar](repeating: 0, count: 256)
        let pixels = [UInt8](repeating: 200, count: 48 * 30 * 3)
        XCTAssertEqual(kiosk_jpeg_encode_file(path, pixels, 48, 30, 3, 90, &message, message.count), 0)
        XCTAssertEqual(try ImageHeader.read(path: path), ImageHeader(format: .jpeg, width: 48, height: 30))
        XCTAssertThrowsError(try render(ImageContent(path: path, maxPixels: 1000), size: Size(width: 8, height: 8))) {
            XCTAssertTrue("\($0)".contains("JPEG of 48x30 pixels"), "\($0)")
        }
    }
}
