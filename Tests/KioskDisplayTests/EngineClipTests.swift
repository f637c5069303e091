import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

final class EngineClipTests: XCTestCase {
    /// A ticker strip inside a narrower band that clips: moved half out of the band, it shows only inside it, and
    /// the damage stays inside the band.
    func testChildMovedHalfOutsideAClippingParentShowsOnlyInsideIt() throws {
        let h = try CompositionHarness()
        let band = Rect(x: 8, y: 16, width: 40, height: 12)
        let parent = h.addLayer("band", frame: band, HalvesContent(0xFF20_2020))
        parent.clipsToBounds = true
        let strip = h.addLayer("ticker", frame: Rect(x: 4, y: 2, width: 24, height: 8), HalvesContent(red), to: parent)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 12, y: 18, width: 24, height: 8)))

        h.presented = []
        strip.frame.origin(x: 28, y: 2)  // screen x 36..<60; the band ends at 48
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 36, y: 18, width: 12, height: 8)))
        XCTAssertEqual(h.front(50, 20), 0, "outside the band the root's black shows")
        for rect in h.presented.flatMap({ $0 }) {
            XCTAssertEqual(rect.intersection(band), rect, "damage \(rect) leaves the band")
        }

        strip.frame.origin(x: -12, y: 8)  // half off the band's left and bottom
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 8, y: 24, width: 12, height: 4)))

        parent.clipsToBounds = false
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 0, y: 24, width: 20, height: 8)),
                       "without clipping the whole strip shows (up to the screen's edge)")
    }

    /// Clips of nested clipping ancestors intersect.
    func testNestedClipsIntersect() throws {
        let h = try CompositionHarness()
        let outer = Layer(frame: Rect(x: 0, y: 0, width: 30, height: 48), name: "outer")
        outer.clipsToBounds = true
        h.engine.rootLayer.addChild(outer)
        let inner = Layer(frame: Rect(x: 10, y: 10, width: 40, height: 10), name: "inner")
        inner.clipsToBounds = true
        outer.addChild(inner)
        h.addLayer("fill", frame: Rect(x: -20, y: -20, width: 100, height: 100), HalvesContent(red), to: inner)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 10, y: 10, width: 20, height: 10)))
    }
}
