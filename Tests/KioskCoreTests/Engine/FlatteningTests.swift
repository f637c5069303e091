import KioskCore
import XCTest

/// Flattening a subtree that already shows (a page when its transition starts): the flattened surface is made from
/// the descendants' own current renders (their contents are not drawn again), is opaque when an opaque descendant
/// covers it, the subtree shows layer by layer until it lands, and turning flattening off again shows the
/// descendants' own renders at once, rendering again only those that changed meanwhile.
final class FlatteningTests: XCTestCase {
    private func page(_ h: EngineHarness) -> (page: Layer, background: Layer, badge: Layer, draws: Counter) {
        let draws = Counter()
        let page = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "page")
        h.root.addChild(page)
        let background = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48),
                               content: SolidContent(color: blue, draws: draws), name: "background")
        page.addChild(background)
        let badge = Layer(frame: Rect(x: 8, y: 8, width: 8, height: 8),
                          content: SolidContent(color: Color(red: 1, green: 0, blue: 0, alpha: 0.5), draws: draws), name: "badge")
        page.addChild(badge)
        h.settle()
        return (page, background, badge, draws)
    }

    func testAFlattenedSubtreeIsMadeFromTheDescendantsCurrentRendersAndIsOpaqueOverAnOpaqueOne() throws {
        let h = try EngineHarness()
        let (page, background, badge, draws) = page(h)
        XCTAssertEqual(draws.value, 2)
        let before = h.compositor.pixel(x: 10, y: 10)
        h.runsQueuedJobs = false
        page.rasterizesSubtree = true
        h.settleNow()
        XCTAssertNil(page.renderedSurface, "the flattening is still queued")
        XCTAssertEqual(h.compositor.composeCalls.last?.items.count, 3, "meanwhile the subtree composites layer by layer")
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), before)
        h.runsQueuedJobs = true
        h.settle()
        let surface = try XCTUnwrap(page.renderedSurface)
        XCTAssertEqual(draws.value, 2, "the descendants' contents were not drawn again: their renders were copied")
        XCTAssertTrue(surface.isOpaque, "an opaque descendant covers the whole flattened surface")
        XCTAssertEqual(surface.pixel(x: 1, y: 1), premultipliedARGB(blue))
        XCTAssertEqual(surface.pixel(x: 10, y: 10), 0xFF80_007F, "half red over blue")
        XCTAssertEqual(h.compositor.composeCalls.last?.items.count, 2, "the root and the subtree, one item")
        XCTAssertNotNil(background.renderedSurface, "the descendants keep their own renders")
        XCTAssertNotNil(badge.renderedSurface)
    }

    func testTurnedOffTheCurrentDescendantsShowTheirOwnRendersAndOnlyAChangedOneRendersAgain() throws {
        let h = try EngineHarness()
        let (page, _, badge, draws) = page(h)
        page.rasterizesSubtree = true
        h.settle()
        let started = h.stats.rendersStarted
        page.rasterizesSubtree = false
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, started, "nothing renders again: every descendant's own render is current")
        XCTAssertEqual(draws.value, 2)
        XCTAssertEqual(h.compositor.composeCalls.last?.items.count, 3)

        page.rasterizesSubtree = true
        h.settle()
        badge.content = SolidContent(color: green, draws: draws)
        h.settle()
        XCTAssertEqual(page.renderedSurface?.pixel(x: 10, y: 10), premultipliedARGB(green), "the flattening drew the change")
        let flattened = h.stats.rendersStarted
        page.rasterizesSubtree = false
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, flattened + 1, "only the badge, changed while flattened, renders again")
        XCTAssertEqual(badge.renderedSurface?.pixel(x: 1, y: 1), premultipliedARGB(green))
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(green))
    }
}
