import CKioskJpeg
import Foundation
import KioskCore
import KioskRender
import XCTest

final class ImageFormatTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-images-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        ImageContent.purgeCache()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes a JPEG with libjpeg's compressor: `components` bytes per pixel from `pixel(x, y)`.
    private func writeJPEG(_ name: String, width: Int, height: Int, components: Int,
                           pixel: (Int, Int) -> [UInt8]) throws -> String {
        let path = directory.appendingPathComponent(name).path
        var bytes: [UInt8] = []
        for y in 0..<height { for x in 0..<width { bytes += pixel(x, y) } }
        var message = [CChar](repeating: 0, count: 256)
        let status = kiosk_jpeg_encode_file(path, bytes, Int32(width), Int32(height), Int32(components), 95, &message,
                                            message.count)
        XCTAssertEqual(status, 0, String(cString: message))
        return path
    }

    private func writeSVG(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func assertColor(_ actual: (a: Int, r: Int, g: Int, b: Int), _ rgb: (Int, Int, Int), tolerance: Int = 6,
                             _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.a, 255, message, file: file, line: line)
        XCTAssertTrue(abs(actual.r - rgb.0) <= tolerance && abs(actual.g - rgb.1) <= tolerance
                      && abs(actual.b - rgb.2) <= tolerance, "got \(actual), expected \(rgb) \(message)",
                      file: file, line: line)
    }

    // MARK: JPEG

    func testRGBJPEGDecodesWithTheRightColours() throws {
        // Left half red, right half blue, in blocks of 8 so the DCT keeps the edge clean.
        let path = try writeJPEG("halves.jpg", width: 32, height: 16, components: 3) { x, _ in
            x < 16 ? [220, 30, 30] : [20, 40, 200]
        }
        let surface = try render(ImageContent(path: path, fit: .fill), size: Size(width: 32, height: 16))
        assertColor(surface.argb(4, 8), (220, 30, 30), "left half")
        assertColor(surface.argb(28, 8), (20, 40, 200), "right half")
        XCTAssertEqual(surface.coverage.count, 32 * 16)
    }

    func testGrayscaleAndCMYKJPEGsDecode() throws {
        let gray = try writeJPEG("gray.jpg", width: 16, height: 16, components: 1) { x, _ in [x < 8 ? 40 : 200] }
        let graySurface = try render(ImageContent(path: gray, fit: .none), size: Size(width: 16, height: 16))
        assertColor(graySurface.argb(2, 8), (40, 40, 40))
        assertColor(graySurface.argb(13, 8), (200, 200, 200))

        // Inverted (Adobe) CMYK: 255 = no ink. Full cyan ink is 0 in C; no ink elsewhere → (0, 255, 255).
        let cmyk = try writeJPEG("cmyk.jpg", width: 16, height: 16, components: 4) { _, _ in [0, 255, 255, 255] }
        let cmykSurface = try render(ImageContent(path: cmyk, fit: .none), size: Size(width: 16, height: 16))
        assertColor(cmykSurface.argb(8, 8), (0, 255, 255), tolerance: 8, "cyan")
    }

    func testJPEGIsDetectedByContentNotExtension() throws {
        let path = try writeJPEG("actually-a-jpeg.png", width: 8, height: 8, components: 3) { _, _ in [0, 200, 0] }
        let surface = try render(ImageContent(path: path), size: Size(width: 8, height: 8))
        assertColor(surface.argb(4, 4), (0, 200, 0))
    }

    func testTruncatedJPEGAndUnknownFormatFailNamingTheFile() throws {
        let path = try writeJPEG("whole.jpg", width: 16, height: 16, components: 3) { _, _ in [1, 2, 3] }
        let truncated = directory.appendingPathComponent("truncated.jpg").path
        try Data(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(20)).write(to: URL(fileURLWithPath: truncated))
        XCTAssertThrowsError(try render(ImageContent(path: truncated), size: Size(width: 8, height: 8))) {
            XCTAssertTrue("\($0)".contains(truncated), "\($0)")
            XCTAssertTrue("\($0)".contains("cannot decode JPEG"), "\($0)")
        }
        let text = try writeSVG("notes.svg", "GIF89a, not an image kiosk reads")
        XCTAssertThrowsError(try render(ImageContent(path: text), size: Size(width: 8, height: 8))) {
            XCTAssertTrue("\($0)".contains(text), "\($0)")
            XCTAssertTrue("\($0)".contains("not a PNG, JPEG or SVG"), "\($0)")
            XCTAssertTrue("\($0)".contains("47 49 46 38"), "shows the first bytes: \($0)")
        }
    }

    func testLargeJPEGDecodesReducedForASmallLayerWithTheSamePicture() throws {
        let path = try writeJPEG("large.jpg", width: 640, height: 320, components: 3) { x, _ in
            x < 320 ? [250, 200, 0] : [0, 100, 250]
        }
        let surface = try render(ImageContent(path: path, fit: .contain), size: Size(width: 64, height: 64))
        XCTAssertEqual(surface.coverage.bounds, Rect(x: 0, y: 16, width: 64, height: 32), "letterboxed 2:1")
        assertColor(surface.argb(10, 32), (250, 200, 0), tolerance: 8)
        assertColor(surface.argb(54, 32), (0, 100, 250), tolerance: 8)
    }

    // MARK: SVG

    private let badge = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a test badge -->
        <svg xmlns="http://www.w3.org/2000/svg" width="20" height="10" viewBox="0 0 20 10">
          <rect x="0" y="0" width="10" height="10" fill="#ff0000"/>
          <rect x="10" y="0" width="10" height="10" fill="#0000ff"/>
        </svg>
        """

    func testSVGRendersCrisplyAtTheLayerSize() throws {
        let path = try writeSVG("badge.svg", badge)
        // 20x10 document drawn 20 times larger: a bitmap scaled up would blur the red/blue edge over many pixels.
        let surface = try render(ImageContent(path: path, fit: .contain), size: Size(width: 400, height: 200))
        XCTAssertTrue(surface.argb(199, 100) == (255, 255, 0, 0), "red up to the middle: \(surface.argb(199, 100))")
        XCTAssertTrue(surface.argb(200, 100) == (255, 0, 0, 255), "blue right after: \(surface.argb(200, 100))")
        XCTAssertEqual(surface.coverage.count, 400 * 200)
    }

    func testSVGFitModes() throws {
        let path = try writeSVG("badge-fit.svg", badge)
        let size = Size(width: 60, height: 60)
        let contain = try render(ImageContent(path: path, fit: .contain), size: size)
        XCTAssertEqual(contain.coverage.bounds, Rect(x: 0, y: 15, width: 60, height: 30), "letterboxed")
        let cover = try render(ImageContent(path: path, fit: .cover), size: size)
        XCTAssertEqual(cover.coverage.count, 3600)
        XCTAssertTrue(cover.argb(29, 30) == (255, 255, 0, 0) && cover.argb(30, 30) == (255, 0, 0, 255), "centred crop")
        let fill = try render(ImageContent(path: path, fit: .fill), size: size)
        XCTAssertEqual(fill.coverage.count, 3600)
        XCTAssertTrue(fill.argb(29, 0) == (255, 255, 0, 0) && fill.argb(30, 59) == (255, 0, 0, 255), "stretched")
        let none = try render(ImageContent(path: path, fit: .none), size: size)
        XCTAssertEqual(none.coverage.bounds, Rect(x: 20, y: 25, width: 20, height: 10), "own size, centred")
    }

    func testSVGWithOnlyAViewBoxAndBrokenSVG() throws {
        let viewBoxOnly = try writeSVG("viewbox.svg", """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 20"><rect width="10" height="20" fill="#00ff00"/></svg>
            """)
        let surface = try render(ImageContent(path: viewBoxOnly, fit: .contain), size: Size(width: 40, height: 40))
        XCTAssertEqual(surface.coverage.bounds, Rect(x: 10, y: 0, width: 20, height: 40), "1:2 from the viewBox")

        let broken = try writeSVG("broken.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"5\"")
        XCTAssertThrowsError(try render(ImageContent(path: broken), size: Size(width: 8, height: 8))) {
            XCTAssertTrue("\($0)".contains(broken), "\($0)")
            XCTAssertTrue("\($0)".contains("SVG"), "\($0)")
        }
    }

    func testSVGIsCachedAndGolden() throws {
        let path = try writeSVG("logo.svg", """
            <svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">
              <circle cx="32" cy="32" r="28" fill="#4263eb"/>
              <path d="M20 34 L29 43 L46 24" stroke="#ffffff" stroke-width="6" fill="none" stroke-linecap="round"
                    stroke-linejoin="round"/>
            </svg>
            """)
        let size = Size(width: 96, height: 96)
        let first = try render(ImageContent(path: path), size: size)
        let before = ImageContent.cacheStatistics
        let second = try render(ImageContent(path: path), size: size)
        XCTAssertEqual(ImageContent.cacheStatistics.hits, before.hits + 1)
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: first.bytes, count: first.byteCount)),
                       Array(UnsafeRawBufferPointer(start: second.bytes, count: second.byteCount)))
        assertMatchesGolden(first, name: "image-svg", tolerance: GoldenTolerance.shapes)
    }
}
