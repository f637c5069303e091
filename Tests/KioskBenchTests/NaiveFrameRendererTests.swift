import KioskBench
import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

/// The bench's baseline draws the same picture the compositor does, clipped the same way, with either strategy.
final class NaiveFrameRendererTests: XCTestCase {
    private let size = Size(width: 320, height: 240)

    private func surface(_ content: any LayerContent, _ frame: Rect) throws -> LayerSurface {
        let s = LayerSurface(size: frame.size, isOpaque: content.isOpaque)
        try content.draw(into: s, isCancelled: { false })
        return s
    }

    private func naive(_ items: [SceneItem], _ strategy: NaiveFrameRenderer.Strategy) throws -> [UInt8] {
        var pixels = [UInt8](repeating: 0x99, count: size.width * size.height * 4)
        try pixels.withUnsafeMutableBytes {
            try NaiveFrameRenderer(strategy: strategy).render(items: items, into: PixelBuffer(index: 0, base: $0.baseAddress!, size: size, stride: size.width * 4))
        }
        return pixels
    }

    func testNaiveRendererAndCompositorDrawTheSamePicture() throws {
        let items = [
            SceneItem(content: RectContent(fill: .verticalGradient(top: Color(rgb: 0x1A1D26), bottom: Color(rgb: 0x07080C))), frame: Rect(size: size)),
            SceneItem(content: ClockContent(text: "12:34", font: "Sans Bold 40"), frame: Rect(x: 20, y: 20, width: 200, height: 60)),
            SceneItem(content: TextContent("A kiosk says <i>hello</i>", isMarkup: true, font: "Sans 14", alignment: .center),
                      frame: Rect(x: 20, y: 90, width: 180, height: 60), opacity: 0.5),
            SceneItem(content: RectContent(color: Color(rgb: 0x3050A0, alpha: 0.7), cornerRadius: 8), frame: Rect(x: 200, y: 120, width: 100, height: 50)),
            SceneItem(content: ProgressContent(value: 0.4), frame: Rect(x: 20, y: 190, width: 280, height: 12)),
        ]
        let compositor = try ShadowCompositor(size: size, background: .black)
        compositor.compose(try items.map {
            CompositeItem(source: .surface(try surface($0.content, $0.frame)), frame: $0.frame, opacity: $0.opacity)
        }, damage: [Rect(size: size)])
        for strategy in NaiveFrameRenderer.Strategy.allCases {
            let drawn = try naive(items, strategy)
            let diff = drawn.withUnsafeBytes { a in compositor.snapshot().withUnsafeBytes { b in
                compareImages(a, b, size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 1)
            } }
            XCTAssertTrue(diff.matches, "\(strategy): \(diff)")
        }
    }

    func testAnItemIsClippedToItsClippingAncestors() throws {
        // A strip twice the screen's width, clipped to a band: nothing of it lands outside the band.
        let band = Rect(x: 40, y: 100, width: 200, height: 40)
        let strip = SceneItem(content: RectContent(color: Color(rgb: 0xFFFFFF)), frame: Rect(x: -100, y: 90, width: 640, height: 60), clip: band)
        for strategy in NaiveFrameRenderer.Strategy.allCases {
            let drawn = try naive([strip], strategy)
            func isWhite(_ x: Int, _ y: Int) -> Bool { drawn[(y * size.width + x) * 4 + 1] == 0xFF }
            XCTAssertTrue(isWhite(40, 100), "\(strategy)")
            XCTAssertTrue(isWhite(239, 139), "\(strategy)")
            XCTAssertFalse(isWhite(39, 120), "\(strategy): left of the clip")
            XCTAssertFalse(isWhite(240, 120), "\(strategy): right of the clip")
            XCTAssertFalse(isWhite(100, 95), "\(strategy): above the clip, inside the strip")
        }
    }
}
