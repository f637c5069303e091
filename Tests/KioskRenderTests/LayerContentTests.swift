import Dispatch
import Foundation
import KioskCore
import KioskRender
import XCTest

final class LayerContentTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-content-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: rect

    func testSolidSquareRectIsOpaqueAndCoversEveryPixel() throws {
        let content = RectContent(color: Color(rgb: 0x3366CC))
        XCTAssertEqual(content.kind, "rect")
        XCTAssertTrue(content.isOpaque)
        let surface = try render(content, size: Size(width: 30, height: 20))
        XCTAssertEqual(surface.coverage.count, 600)
        XCTAssertTrue(surface.argb(29, 19) == (255, 0x33, 0x66, 0xCC))
    }

    func testRoundedRectWithBorderLeavesCornersClear() throws {
        let content = RectContent(color: Color(rgb: 0xFFFFFF), cornerRadius: 10,
                                  border: RectContent.Border(width: 3, color: Color(rgb: 0xFF0000)))
        XCTAssertFalse(content.isOpaque, "rounded corners are transparent")
        let surface = try render(content, size: Size(width: 60, height: 40))
        XCTAssertEqual(surface.argb(0, 0).a, 0, "corner outside the radius")
        XCTAssertTrue(surface.argb(30, 20) == (255, 255, 255, 255), "inside is the fill")
        XCTAssertTrue(surface.argb(30, 1) == (255, 255, 0, 0), "the top edge is the border")
        XCTAssertTrue(surface.argb(58, 20) == (255, 255, 0, 0), "the right edge is the border")
    }

    func testGradientRunsFromTopToBottom() throws {
        let content = RectContent(fill: .verticalGradient(top: Color(rgb: 0x000000), bottom: Color(rgb: 0xFFFFFF)))
        XCTAssertTrue(content.isOpaque)
        let surface = try render(content, size: Size(width: 4, height: 100))
        XCTAssertLessThan(surface.argb(2, 0).r, 10)
        XCTAssertGreaterThan(surface.argb(2, 99).r, 245)
        XCTAssertEqual(Double(surface.argb(2, 50).r), 128, accuracy: 6)
        XCTAssertFalse(RectContent(fill: .verticalGradient(top: .white, bottom: Color(rgb: 0, alpha: 0.5))).isOpaque)
    }

    // MARK: text

    func testTextDrawsInsideTheLayerAndCentresVertically() throws {
        let content = TextContent("Hello, kiosk", font: "Sans 20", color: .white, alignment: .center,
                                  centersVertically: true)
        XCTAssertEqual(content.kind, "text")
        let surface = try render(content, size: Size(width: 300, height: 100))
        let bounds = try XCTUnwrap(surface.coverage.bounds)
        XCTAssertGreaterThan(surface.coverage.count, 150)
        XCTAssertGreaterThan(bounds.y, 25, "space above: \(bounds)")
        XCTAssertLessThan(bounds.maxY, 75, "space below: \(bounds)")
        XCTAssertEqual(Double(bounds.x + bounds.width / 2), 150, accuracy: 8, "horizontally centred: \(bounds)")
    }

    func testAlignmentMovesTheText() throws {
        func bounds(_ alignment: TextContent.Alignment) throws -> Rect {
            let content = TextContent("Align me", font: "Sans 16", alignment: alignment, wraps: false, ellipsizes: false)
            return try XCTUnwrap(try render(content, size: Size(width: 400, height: 30)).coverage.bounds)
        }
        XCTAssertLessThan(try bounds(.left).x, 5)
        XCTAssertGreaterThan(try bounds(.right).maxX, 394)
        XCTAssertGreaterThan(try bounds(.right).x, 250)
    }

    func testLongTextWrapsAndMaxLinesLimitsIt() throws {
        let words = Array(repeating: "lorem ipsum dolor", count: 12).joined(separator: " ")
        let size = Size(width: 200, height: 300)
        let unlimited = try render(TextContent(words, font: "Sans 16"), size: size).coverage.bounds
        let twoLines = try render(TextContent(words, font: "Sans 16", maxLines: 2), size: size).coverage.bounds
        let twoLinesClipped = try render(TextContent(words, font: "Sans 16", ellipsizes: false, maxLines: 2),
                                         size: size).coverage.bounds
        let unlimitedHeight = try XCTUnwrap(unlimited).height
        XCTAssertGreaterThan(unlimitedHeight, 100, "wraps onto many lines")
        for limited in [twoLines, twoLinesClipped] {
            let height = try XCTUnwrap(limited).height
            XCTAssertLessThan(height, 50, "two lines of 16 px text")
            XCTAssertGreaterThan(height, 20, "more than one line")
        }
        XCTAssertLessThanOrEqual(try XCTUnwrap(unlimited).maxX, 200)
    }

    func testEllipsizedLineStaysInsideTheLayer() throws {
        let content = TextContent(String(repeating: "wide ", count: 60), font: "Sans 16", wraps: false)
        let surface = try render(content, size: Size(width: 120, height: 24))
        XCTAssertGreaterThan(surface.coverage.count, 50)
        XCTAssertEqual(surface.coveredPixels(columns: 119..<120), 0, "the ellipsis ends inside the width")
    }

    func testMarkupIsAppliedAndInvalidMarkupThrows() throws {
        let plain = try render(TextContent("Bold", font: "Sans 20"), size: Size(width: 120, height: 30))
        let bold = try render(TextContent("<b>Bold</b>", isMarkup: true, font: "Sans 20"), size: Size(width: 120, height: 30))
        XCTAssertGreaterThan(bold.coverage.count, plain.coverage.count, "bold covers more pixels")
        XCTAssertThrowsError(try render(TextContent("<b>unclosed", isMarkup: true), size: Size(width: 50, height: 20))) {
            XCTAssertTrue("\($0)".contains("invalid markup"), "\($0)")
            XCTAssertTrue("\($0)".contains("<b>unclosed"), "\($0)")
        }
    }

    func testChineseArabicAndEmojiTextDraws() throws {
        for text in ["你好，世界", "مرحبا بالعالم", "🙂🚀✨"] {
            let surface = try render(TextContent(text, font: "Sans 24", centersVertically: true),
                                     size: Size(width: 300, height: 60))
            XCTAssertGreaterThan(surface.coverage.count, 40, "\(text) draws pixels")
        }
    }

    func testCancelledDrawLeavesTheSurfaceEmpty() throws {
        let surface = LayerSurface(size: Size(width: 100, height: 30))
        try TextContent("never shown").draw(into: surface, isCancelled: { true })
        XCTAssertEqual(surface.coverage.count, 0)
    }

    // MARK: image

    func testImageFitsContainCoverFillAndNone() throws {
        let path = try writeTestPNG(width: 40, height: 20, color: 0x20C040)
        let size = Size(width: 60, height: 60)
        let contain = try render(ImageContent(path: path, fit: .contain), size: size)
        XCTAssertEqual(contain.coverage.bounds, Rect(x: 0, y: 15, width: 60, height: 30), "letterboxed")
        XCTAssertTrue(contain.argb(30, 30) == (255, 0x20, 0xC0, 0x40))

        let cover = try render(ImageContent(path: path, fit: .cover), size: size)
        XCTAssertEqual(cover.coverage.count, 3600)
        let fill = try render(ImageContent(path: path, fit: .fill), size: size)
        XCTAssertEqual(fill.coverage.count, 3600)
        let none = try render(ImageContent(path: path, fit: .none), size: size)
        XCTAssertEqual(none.coverage.bounds, Rect(x: 10, y: 20, width: 40, height: 20), "own size, centred")
        XCTAssertEqual(ImageContent(path: path).kind, "image")
    }

    func testMissingImageThrowsNamingThePath() {
        let path = directory.appendingPathComponent("missing.png").path
        XCTAssertThrowsError(try render(ImageContent(path: path), size: Size(width: 10, height: 10))) {
            XCTAssertTrue("\($0)".contains(path), "\($0)")
            XCTAssertTrue("\($0)".contains("ENOENT"), "\($0)")
        }
    }

    func testUnreadableImageThrowsNamingThePath() throws {
        let path = directory.appendingPathComponent("not-a.png").path
        try Data("this is not a PNG".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try render(ImageContent(path: path), size: Size(width: 10, height: 10))) {
            XCTAssertTrue("\($0)".contains(path), "\($0)")
        }
    }

    func testImageCacheServesRepeatsAndNoticesAReplacedFile() throws {
        ImageContent.purgeCache()
        let path = try writeTestPNG(width: 8, height: 8, color: 0xFF0000)
        let size = Size(width: 16, height: 16)
        _ = try render(ImageContent(path: path, fit: .fill), size: size)
        let before = ImageContent.cacheStatistics
        let again = try render(ImageContent(path: path, fit: .fill), size: size)
        let after = ImageContent.cacheStatistics
        XCTAssertEqual(after.hits, before.hits + 1)
        XCTAssertTrue(again.argb(8, 8) == (255, 255, 0, 0))
        XCTAssertGreaterThan(after.bytes, 0)

        // A different size (bigger file) and a new modification time: decoded again, new colour.
        _ = try writeTestPNG(width: 9, height: 9, color: 0x0000FF, name: (path as NSString).lastPathComponent)
        let replaced = try render(ImageContent(path: path, fit: .fill), size: size)
        XCTAssertTrue(replaced.argb(8, 8) == (255, 0, 0, 255))
    }

    // MARK: fps, clock, ticker, progress

    func testFPSContentShowsItsNumbersOnATranslucentPanel() throws {
        let content = FPSContent(framesPerSecond: 59.94, frameMilliseconds: 16.68, droppedFrames: 0)
        XCTAssertEqual(content.kind, "fps")
        XCTAssertEqual(content.text, "60 fps · 16.7 ms")
        XCTAssertEqual(FPSContent(framesPerSecond: 30, frameMilliseconds: 33.333, droppedFrames: 4).text,
                       "30 fps · 33.3 ms · 4 dropped")
        let surface = try render(content, size: Size(width: 220, height: 32))
        XCTAssertEqual(Double(surface.argb(110, 2).a), 153, accuracy: 2, "the panel is 60 % black")
        var bright = 0
        for y in 0..<32 { for x in 0..<220 where surface.argb(x, y).r > 200 { bright += 1 } }
        XCTAssertGreaterThan(bright, 100, "white text on the panel")
    }

    func testClockFormatsTheGivenTimeAndDraws() throws {
        XCTAssertEqual(ClockContent.format(time: 0, format: "%Y-%m-%d %H:%M:%S", timeZone: .utc), "1970-01-01 00:00:00")
        XCTAssertEqual(ClockContent.format(time: 1_763_771_696, format: "%H:%M", timeZone: .utc), "00:34")
        let content = ClockContent(time: 45_296, format: "%H:%M:%S", timeZone: .utc, font: "Sans Bold 32")
        XCTAssertEqual(content.text, "12:34:56")
        XCTAssertEqual(content.kind, "clock")
        let surface = try render(content, size: Size(width: 240, height: 60))
        XCTAssertGreaterThan(surface.coverage.count, 300)
        let bounds = try XCTUnwrap(surface.coverage.bounds)
        XCTAssertGreaterThan(bounds.y, 3)
        XCTAssertLessThan(bounds.maxY, 57)
    }

    func testTickerStripIsAsWideAsItsTextAndDrawsAlongIt() throws {
        let short = TickerTextContent("Breaking", font: "Sans 20")
        let long = TickerTextContent(String(repeating: "Breaking news from the kiosk. ", count: 10), font: "Sans 20",
                                     padding: 16)
        XCTAssertEqual(long.kind, "ticker")
        let shortSize = try short.naturalSize(), longSize = try long.naturalSize()
        XCTAssertGreaterThan(longSize.width, shortSize.width * 20)
        XCTAssertEqual(shortSize.height, longSize.height, "one line either way")
        let surface = try render(long, size: longSize)
        XCTAssertEqual(surface.coveredPixels(columns: 0..<14), 0, "leading padding")
        XCTAssertGreaterThan(surface.coveredPixels(columns: 16..<80), 20, "text starts after the padding")
        XCTAssertGreaterThan(surface.coveredPixels(columns: (longSize.width - 120)..<(longSize.width - 16)), 20,
                             "text runs to the end of the strip")
    }

    func testProgressFillsItsShareOfTheTrack() throws {
        let content = ProgressContent(value: 0.5, trackColor: Color(rgb: 0x202020), fillColor: Color(rgb: 0x00FF00))
        XCTAssertEqual(content.kind, "progress")
        let surface = try render(content, size: Size(width: 200, height: 20))
        XCTAssertTrue(surface.argb(50, 10) == (255, 0, 255, 0), "filled half")
        XCTAssertTrue(surface.argb(150, 10) == (255, 0x20, 0x20, 0x20), "track")
        XCTAssertEqual(surface.argb(0, 0).a, 0, "rounded end")
        let overfull = try render(ProgressContent(value: 7, fillColor: Color(rgb: 0x00FF00)), size: Size(width: 200, height: 20))
        XCTAssertTrue(overfull.argb(190, 10) == (255, 0, 255, 0), "value is clamped to 1")
    }

    // MARK: threads

    /// Content draws on render workers: several threads drawing text and images at once must each get the same
    /// pixels as a draw on one thread (and, under ThreadSanitizer, report no race in the cache or the text path).
    func testContentDrawsConcurrentlyOnSeveralThreads() throws {
        ImageContent.purgeCache()
        let path = try writeTestPNG(width: 32, height: 24, color: 0x804020)
        let contents: [any LayerContent] = [
            TextContent("Concurrent 你好 مرحبا", font: "Sans 18", centersVertically: true),
            ImageContent(path: path, fit: .cover),
            ClockContent(text: "08:15"),
            FPSContent(framesPerSecond: 60, frameMilliseconds: 2.5),
        ]
        let size = Size(width: 160, height: 48)
        let references = try contents.map { content -> [UInt8] in
            let surface = LayerSurface(size: size)
            try content.draw(into: surface, isCancelled: { false })
            return Array(UnsafeRawBufferPointer(start: surface.bytes, count: surface.byteCount))
        }
        let mismatches = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let index = i % contents.count
            let surface = LayerSurface(size: size)
            do {
                try contents[index].draw(into: surface, isCancelled: { false })
            } catch {
                mismatches.withLock { $0 += 1 }
                return
            }
            let bytes = Array(UnsafeRawBufferPointer(start: surface.bytes, count: surface.byteCount))
            if bytes != references[index] { mismatches.withLock { $0 += 1 } }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
    }

    // MARK: helpers

    private func writeTestPNG(width: Int, height: Int, color: UInt32, name: String? = nil) throws -> String {
        let path = directory.appendingPathComponent(name ?? "image-\(width)x\(height)-\(color).png").path
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for i in 0..<(width * height) {
            pixels[i * 4] = UInt8(color & 0xFF)
            pixels[i * 4 + 1] = UInt8((color >> 8) & 0xFF)
            pixels[i * 4 + 2] = UInt8((color >> 16) & 0xFF)
        }
        try writePNG(xrgb8888: pixels, size: Size(width: width, height: height), stride: width * 4, to: path)
        return path
    }
}
