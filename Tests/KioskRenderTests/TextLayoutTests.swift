import Dispatch
import Foundation
@testable import KioskRender
import KioskCore
import KioskRenderTestSupport
import XCTest

final class TextLayoutTests: XCTestCase {
    private let size = Size(width: 360, height: 64)

    /// Every script draws real glyphs (no hex boxes), with ink inside the layer.
    private func assertDrawsCleanly(_ content: TextContent, file: StaticString = #filePath, line: UInt = #line) throws
        -> (TextLayoutReport, LayerSurface) {
        let report = try content.layoutReport(size: size)
        let surface = try render(content, size: size)
        XCTAssertGreaterThan(report.glyphs.count, 0, "glyphs for \(content.text)", file: file, line: line)
        XCTAssertEqual(report.unknownGlyphs, 0, "no missing-glyph boxes for \(content.text): \(report.glyphs)",
                       file: file, line: line)
        XCTAssertGreaterThan(report.ink.width, 0, file: file, line: line)
        XCTAssertGreaterThanOrEqual(report.ink.x, 0, "ink \(report.ink) starts inside", file: file, line: line)
        XCTAssertGreaterThanOrEqual(report.ink.y, 0, "ink \(report.ink) starts inside", file: file, line: line)
        XCTAssertLessThanOrEqual(report.ink.maxX, size.width, "ink \(report.ink) ends inside", file: file, line: line)
        XCTAssertLessThanOrEqual(report.ink.maxY, size.height, "ink \(report.ink) ends inside", file: file, line: line)
        XCTAssertGreaterThan(surface.coverage.count, 100, "\(content.text) draws pixels", file: file, line: line)
        return (report, surface)
    }

    func testChineseDrawsWithRealGlyphs() throws {
        let content = TextContent("欢迎光临 数字标牌", font: "Sans 28", alignment: .center, centersVertically: true)
        let (report, surface) = try assertDrawsCleanly(content)
        XCTAssertEqual(report.glyphs.count, 9, "one glyph per character and the space")
        XCTAssertEqual(report.linesAreRightToLeft, [false])
        assertMatchesGolden(surface, name: "text-chinese", tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction)
    }

    func testArabicIsRightToLeftShapedAndRightAligned() throws {
        let text = "مرحبا بكم في الكشك"
        let content = TextContent(text, font: "Sans 28", alignment: .left, centersVertically: true)
        let (report, surface) = try assertDrawsCleanly(content)
        XCTAssertEqual(report.linesAreRightToLeft, [true], "Pango resolves the paragraph right to left")
        let bounds = try XCTUnwrap(surface.coverage.bounds)
        XCTAssertGreaterThan(bounds.maxX, size.width - 6, "start alignment puts Arabic at the right edge: \(bounds)")
        XCTAssertGreaterThan(bounds.x, 60, "and leaves the left side empty: \(bounds)")

        // Shaping: in context the letters take joined (initial, medial, final) forms. The same letters with a
        // zero-width non-joiner between each are shaped in isolated forms, so the glyph ids must differ.
        let isolated = text.map { String($0) }.joined(separator: "\u{200C}")
        let isolatedReport = try TextContent(isolated, font: "Sans 28", wrap: .none, ellipsize: .none).layoutReport(size: size)
        XCTAssertEqual(isolatedReport.unknownGlyphs, 0)
        let joinedIds = Set(report.glyphs), isolatedIds = Set(isolatedReport.glyphs)
        XCTAssertFalse(joinedIds.subtracting(isolatedIds).isEmpty,
                       "joined forms appear that isolated letters do not use: \(report.glyphs) vs \(isolatedReport.glyphs)")
        XCTAssertLessThanOrEqual(report.glyphs.count, text.unicodeScalars.count)
        assertMatchesGolden(surface, name: "text-arabic", tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction)
    }

    func testEmojiAndAccentsDraw() throws {
        let content = TextContent("Café ☕ 🎉", font: "Sans 28", alignment: .center, centersVertically: true)
        let (report, surface) = try assertDrawsCleanly(content)
        XCTAssertGreaterThanOrEqual(report.glyphs.count, 7)
        // Color emoji: some drawn pixel is clearly not grey (the text itself is white).
        var coloured = 0
        for y in 0..<size.height { for x in 0..<size.width {
            let p = surface.argb(x, y)
            if p.a > 200, max(p.r, p.g, p.b) - min(p.r, p.g, p.b) > 80 { coloured += 1 }
        } }
        XCTAssertGreaterThan(coloured, 20, "the emoji are drawn in colour")
        assertMatchesGolden(surface, name: "text-emoji", tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction)
    }

    func testTextGoldenCatchesAWrongString() throws {
        // The tolerance used for text goldens must still fail when one letter changes.
        let right = try render(TextContent("Welcome to the lobby", font: "Sans 24", centersVertically: true), size: size)
        let wrong = try render(TextContent("Welcome to the lobbv", font: "Sans 24", centersVertically: true), size: size)
        let pixels = GoldenImage.flattened(right)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("golden-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("right.png").path
        XCTAssertFalse(GoldenImage.check(xrgb8888: pixels, size: size, stride: size.width * 4, goldenPath: path,
                                         tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction, record: true).passed)
        let same = GoldenImage.check(xrgb8888: pixels, size: size, stride: size.width * 4, goldenPath: path,
                                     tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction, record: false)
        XCTAssertTrue(same.passed, same.message)
        let changed = GoldenImage.check(xrgb8888: GoldenImage.flattened(wrong), size: size, stride: size.width * 4,
                                        goldenPath: path, tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction, record: false)
        XCTAssertFalse(changed.passed, changed.message)
    }

    // MARK: wrapping, ellipsizing, shrinking

    func testWrapModes() throws {
        let box = Size(width: 120, height: 200)
        let longWord = "Supercalifragilisticexpialidocious"
        let none = try TextContent("one two three four five six", font: "Sans 16", wrap: .none, ellipsize: .none)
            .layoutReport(size: box)
        XCTAssertEqual(none.lineCount, 1)
        let word = try TextContent("one two three four five six", font: "Sans 16", wrap: .word, ellipsize: .none)
            .layoutReport(size: box)
        XCTAssertGreaterThan(word.lineCount, 1)
        let char = try TextContent(longWord, font: "Sans 16", wrap: .char, ellipsize: .none).layoutReport(size: box)
        XCTAssertGreaterThan(char.lineCount, 1, "char wrapping breaks inside a word")
        XCTAssertLessThanOrEqual(char.ink.maxX, box.width)
        let wordChar = try TextContent("a " + longWord, font: "Sans 16", wrap: .wordChar, ellipsize: .none)
            .layoutReport(size: box)
        XCTAssertGreaterThan(wordChar.lineCount, 2, "a word longer than the line falls back to characters")
        XCTAssertLessThanOrEqual(wordChar.ink.maxX, box.width)
    }

    func testEllipsizePositions() throws {
        let text = "BEGIN middle of a long line of text that cannot fit END"
        let box = Size(width: 200, height: 30)
        func layout(_ position: TextContent.Ellipsize) throws -> TextLayoutReport {
            try TextContent(text, font: "Sans 16", wrap: .none, ellipsize: position).layoutReport(size: box)
        }
        XCTAssertFalse(try layout(.none).isEllipsized)
        for position in [TextContent.Ellipsize.start, .middle, .end] {
            let report = try layout(position)
            XCTAssertTrue(report.isEllipsized, "\(position)")
            XCTAssertLessThanOrEqual(report.ink.maxX, box.width, "\(position)")
        }
        // Where the ellipsis goes shows in the pixels: the start keeps "END" at the right, the end keeps "BEGIN".
        let start = try render(TextContent(text, font: "Sans 16", wrap: .none, ellipsize: .start), size: box)
        let end = try render(TextContent(text, font: "Sans 16", wrap: .none, ellipsize: .end), size: box)
        XCTAssertNotEqual(Array(UnsafeRawBufferPointer(start: start.bytes, count: start.byteCount)),
                          Array(UnsafeRawBufferPointer(start: end.bytes, count: end.byteCount)))
        XCTAssertGreaterThan(try XCTUnwrap(start.coverage.bounds).maxX, box.width - 20, "start: text runs to the end")
    }

    func testShrinksToFitWidthAndLines() throws {
        let text = "Platform 9¾ departures"
        let box = Size(width: 160, height: 40)
        let plain = try TextContent(text, font: "Sans 32", wrap: .none, ellipsize: .end).layoutReport(size: box)
        XCTAssertTrue(plain.isEllipsized)
        XCTAssertEqual(plain.pixelSize, 32, accuracy: 0.01)
        let shrunk = try TextContent(text, font: "Sans 32", wrap: .none, ellipsize: .end, shrinksToFit: true)
            .layoutReport(size: box)
        XCTAssertFalse(shrunk.isEllipsized, "shrunk until no ellipsis is needed")
        XCTAssertLessThan(shrunk.pixelSize, 32)
        XCTAssertGreaterThanOrEqual(shrunk.pixelSize, 32 * 0.3)
        XCTAssertLessThanOrEqual(shrunk.ink.maxX, box.width)
        // The largest whole size that fits: one pixel more would not.
        let bigger = try TextContent(text, font: "Sans \(Int(shrunk.pixelSize) + 1)", wrap: .none, ellipsize: .end)
            .layoutReport(size: box)
        XCTAssertTrue(bigger.isEllipsized)

        let fitting = try TextContent("Hi", font: "Sans 32", shrinksToFit: true).layoutReport(size: Size(width: 160, height: 60))
        XCTAssertEqual(fitting.pixelSize, 32, accuracy: 0.01, "text that fits keeps its size")

        let words = "The quick brown fox jumps over the lazy dog again and again"
        let twoLines = try TextContent(words, font: "Sans 24", wrap: .word, ellipsize: .end, maxLines: 2,
                                       shrinksToFit: true).layoutReport(size: Size(width: 200, height: 200))
        XCTAssertLessThanOrEqual(twoLines.lineCount, 2)
        XCTAssertFalse(twoLines.isEllipsized)

        let floor = try TextContent(String(repeating: "very long ", count: 40), font: "Sans 30", wrap: .none,
                                    ellipsize: .end, shrinksToFit: true).layoutReport(size: box)
        XCTAssertEqual(floor.pixelSize, 9, accuracy: 0.01, "stops at 30 % of the size")
        XCTAssertTrue(floor.isEllipsized, "and ellipsizes what still does not fit")
    }

    func testOldFlagsMapToTheNewModes() {
        let old = TextContent("x", wraps: false, ellipsizes: true)
        XCTAssertEqual(old.wrap, .none)
        XCTAssertEqual(old.ellipsize, .end)
        var content = TextContent("x")
        XCTAssertEqual(content.wrap, .word)
        content.wraps = false
        XCTAssertEqual(content.wrap, .none)
        content.ellipsizes = false
        XCTAssertEqual(content.ellipsize, .none)
    }

    // MARK: measuring

    func testMeasureMatchesTheLayoutAndWraps() throws {
        let one = TextContent.measure("Departures", isMarkup: false, font: "Sans 20", maxWidth: nil)
        XCTAssertGreaterThan(one.width, 60)
        XCTAssertEqual(Double(one.height), 20 * 1.2, accuracy: 6, "one line of 20 px text")
        let bold = TextContent.measure("<b>Departures</b>", isMarkup: true, font: "Sans 20", maxWidth: nil)
        XCTAssertGreaterThan(bold.width, one.width)

        let sentence = "Gate changes are announced on this screen"
        let wrapped = TextContent.measure(sentence, isMarkup: false, font: "Sans 20", maxWidth: 150)
        XCTAssertLessThanOrEqual(wrapped.width, 150)
        XCTAssertGreaterThan(wrapped.height, one.height * 2, "several lines")
        let cjk = TextContent.measure("欢迎光临", isMarkup: false, font: "Sans 20", maxWidth: nil)
        XCTAssertEqual(Double(cjk.width), 80, accuracy: 8, "four full-width characters")

        // What measure says fits really fits: drawn at that size, nothing is ellipsized.
        let report = try TextContent(sentence, font: "Sans 20").layoutReport(size: wrapped)
        XCTAssertFalse(report.isEllipsized)
        XCTAssertEqual(TextContent.measure("<b>bad", isMarkup: true, font: "Sans 20", maxWidth: nil),
                       TextContent.measure("<b>bad", isMarkup: false, font: "Sans 20", maxWidth: nil),
                       "invalid markup is measured as literal text")
    }

    func testMeasureIsSafeOnManyThreads() {
        let expected = TextContent.measure("Concurrent مرحبا 你好", isMarkup: false, font: "Sans 18", maxWidth: 120)
        let mismatches = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 24) { _ in
            let size = TextContent.measure("Concurrent مرحبا 你好", isMarkup: false, font: "Sans 18", maxWidth: 120)
            if size != expected { mismatches.withLock { $0 += 1 } }
        }
        XCTAssertEqual(mismatches.withLock { $0 }, 0)
        XCTAssertGreaterThan(expected.width, 0)
    }
}
