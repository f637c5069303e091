import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

/// `CairoCanvas.draw(_:at:clip:opacity:)` draws a content straight onto a canvas: the same pixels as drawing it
/// into its own layer surface and painting that at the same frame, as the compositor does.
final class DirectDrawTests: XCTestCase {
    private let size = Size(width: 240, height: 140)
    private let background = Color(rgb: 0x30405A)

    /// Both paths on a canvas filled with `background`, compared channel by channel. Antialiased edges blended
    /// once (direct) or twice (into a transparent surface, then onto the canvas) may round one step apart.
    private func assertSamePixels(_ content: any LayerContent, at frame: Rect, clip: Rect? = nil, opacity: Double = 1,
                                  tolerance: UInt8 = 1, file: StaticString = #filePath, line: UInt = #line) throws {
        let throughSurface = try CairoCanvas(size: size)
        throughSurface.fill(background)
        let layer = LayerSurface(size: frame.size, isOpaque: content.isOpaque)
        try content.draw(into: layer, isCancelled: { false })
        throughSurface.paint(layer, at: frame, clip: clip, opacity: opacity)

        let direct = try CairoCanvas(size: size)
        direct.fill(background)
        try direct.draw(content, at: frame, clip: clip, opacity: opacity)
        try direct.checkStatus()

        let a = try throughSurface.withPixels { Array($0) }
        let b = try direct.withPixels { Array($0) }
        let diff = compareImages(a, b, size: size, strideA: throughSurface.stride, strideB: direct.stride, tolerance: tolerance)
        XCTAssertTrue(diff.matches, "\(content.kind) at \(frame): \(diff)", file: file, line: line)
        // The content drew something: the frame is not just the background.
        let untouched = try CairoCanvas(size: size)
        untouched.fill(background)
        let blank = try untouched.withPixels { Array($0) }
        XCTAssertFalse(compareImages(blank, b, size: size, strideA: untouched.stride, strideB: direct.stride, tolerance: 0).matches,
                       "\(content.kind) drew nothing", file: file, line: line)
    }

    func testTextAndClockAndTickerDrawTheSamePixelsDirectly() throws {
        try assertSamePixels(TextContent("Opening hours <b>9–17</b>, café upstairs", isMarkup: true, font: "Sans 14",
                                         alignment: .center), at: Rect(x: 10, y: 10, width: 200, height: 60))
        try assertSamePixels(ClockContent(text: "12:34", font: "Sans Bold 36"), at: Rect(x: 30, y: 50, width: 180, height: 60))
        // A ticker strip wider than the screen, clipped to a band: only the band is drawn.
        try assertSamePixels(TickerTextContent("Breaking: the kiosk draws straight into the frame", font: "Sans 18"),
                             at: Rect(x: -120, y: 80, width: 600, height: 40), clip: Rect(x: 20, y: 85, width: 200, height: 30))
    }

    func testShapesDrawTheSamePixelsDirectly() throws {
        try assertSamePixels(RectContent(color: Color(rgb: 0xE04030, alpha: 0.6), cornerRadius: 12,
                                         border: RectContent.Border(width: 3, color: Color(rgb: 0xFFFFFF))),
                             at: Rect(x: 15, y: 20, width: 150, height: 90))
        try assertSamePixels(ProgressContent(value: 0.35), at: Rect(x: 10, y: 60, width: 220, height: 14))
        try assertSamePixels(ProgressContent(value: 0.6, fillColor: Color(rgb: 0x40C080, alpha: 0.5)),
                             at: Rect(x: 10, y: 90, width: 220, height: 14))
        try assertSamePixels(SparklineContent(values: [3, 5, 2, 8, 6, 9, 4], color: Color(rgb: 0xF0F0F0), fill: Color(rgb: 0x3080F0, alpha: 0.3)),
                             at: Rect(x: 20, y: 20, width: 200, height: 80))
        try assertSamePixels(QRCodeContent(text: "https://example.com/kiosk"), at: Rect(x: 60, y: 10, width: 110, height: 110))
        try assertSamePixels(FPSContent(framesPerSecond: 59.9, frameMilliseconds: 3.2), at: Rect(x: 40, y: 40, width: 160, height: 28))
    }

    func testBoxWithTextAndHalfOpacityDrawTheSamePixelsDirectly() throws {
        let box = BoxContent(fill: .solid(Color(rgb: 0x202830)), cornerRadius: 10,
                             border: RectContent.Border(width: 2, color: Color(rgb: 0x80A0C0)),
                             padding: BoxContent.Insets(top: 8, left: 12, bottom: 8, right: 12),
                             content: TextContent("Boxed text that wraps onto a second line", font: "Sans 13"))
        try assertSamePixels(box, at: Rect(x: 20, y: 20, width: 200, height: 80))
        try assertSamePixels(ButtonContent(label: "Continue"), at: Rect(x: 40, y: 30, width: 150, height: 50), opacity: 0.5)
    }

    func testImageDrawsTheSamePixelsDirectlyWithAndWithoutACachedDecode() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-direct-\(getpid()).png").path
        defer { unlink(path) }
        let source = try CairoCanvas(size: Size(width: 40, height: 30))
        source.fill(Color(rgb: 0x20C040))
        source.fill(Rect(x: 10, y: 5, width: 12, height: 8), color: Color(rgb: 0xF0E010))
        try source.writePNG(to: path)
        ImageContent.purgeCache()
        // Cache empty: the direct path decodes (and fills the cache); the second call paints the cached pixels.
        try assertSamePixels(ImageContent(path: path, fit: .contain), at: Rect(x: 30, y: 20, width: 120, height: 100))
        try assertSamePixels(ImageContent(path: path, fit: .cover), at: Rect(x: 30, y: 20, width: 120, height: 100),
                             clip: Rect(x: 0, y: 0, width: 100, height: 80))
    }
}
