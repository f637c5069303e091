import KioskCore
import KioskDisplay
import XCTest

final class TransactionGroupTests: XCTestCase {
    /// A page holding three tiles, each with its own content; the page itself has a background.
    private func makePage(_ h: EngineHarness) -> (page: Layer, tiles: [Layer]) {
        let page = Layer(frame: Rect(x: 0, y: 0, width: 60, height: 40), name: "page")
        page.backgroundColor = grey
        page.holdsChildrenUntilReady = true
        let tiles = [("a", red), ("b", green), ("c", blue)].enumerated().map { index, entry in
            Layer(frame: Rect(x: index * 20, y: 0, width: 16, height: 16), content: SolidContent(color: entry.1), name: entry.0)
        }
        for tile in tiles { page.addChild(tile) }
        h.root.addChild(page)
        return (page, tiles)
    }

    private func tileColors(in call: RecordingCompositor.ComposeCall) -> Set<UInt32> {
        Set(call.itemColors).intersection([red, green, blue].map(premultipliedARGB))
    }

    func testGroupAppliesAllChildrenInOneFrameAndNoneBefore() throws {
        let h = try EngineHarness()
        let (_, tiles) = makePage(h)
        var landed: [String] = []
        for tile in tiles { tile.didRender = { layer, _ in landed.append(layer.name!) } }
        h.turn()
        XCTAssertEqual(h.pool.queuedJobCount, 3)

        // Everything but b finishes.
        h.runsQueuedJobs = false
        XCTAssertEqual(h.pool.runQueued(where: { $0.label != "b" }), 2)
        h.settleNow()
        h.run(for: .milliseconds(100))
        XCTAssertEqual(landed, [], "held results are not applied")
        XCTAssertEqual(h.stats.rendersCompleted, 2)
        for call in h.compositor.composeCalls {
            XCTAssertEqual(call.itemColors, [premultipliedARGB(.black)], "nothing of the page, not even its background, was composed")
        }
        let callsBefore = h.compositor.composeCalls.count

        XCTAssertEqual(h.pool.runQueued(), 1)
        h.turn()
        XCTAssertEqual(landed.sorted(), ["a", "b", "c"])
        XCTAssertEqual(h.compositor.composeCalls.count, callsBefore + 1, "one composition shows the whole page")
        let released = try XCTUnwrap(h.compositor.composeCalls.last)
        XCTAssertEqual(tileColors(in: released), Set([red, green, blue].map(premultipliedARGB)))
        XCTAssertTrue(released.itemColors.contains(premultipliedARGB(grey)), "the page background comes with it")
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
        XCTAssertEqual(h.compositor.pixel(x: 21, y: 1), xrgb(green))
        XCTAssertEqual(h.compositor.pixel(x: 41, y: 1), xrgb(blue))
    }

    func testAChangeOnAShownPageIsAppliedAloneAsSoonAsItIsRendered() throws {
        let h = try EngineHarness()
        let (_, tiles) = makePage(h)
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))

        tiles[0].content = SolidContent(color: yellow)
        tiles[1].content = SolidContent(color: yellow)
        h.runsQueuedJobs = false
        h.turn()
        XCTAssertEqual(h.pool.runQueued(where: { $0.label == "a" }), 1)
        h.settleNow()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(yellow), "a's new render does not wait for b's")
        XCTAssertEqual(h.compositor.pixel(x: 21, y: 1), xrgb(green))

        XCTAssertEqual(h.pool.runQueued(), 1)
        h.settleNow()
        XCTAssertEqual(h.compositor.pixel(x: 21, y: 1), xrgb(yellow))
    }

    func testARequestDuringTheFirstBatchDoesNotHoldThePageBack() throws {
        let h = try EngineHarness()
        let (_, tiles) = makePage(h)
        h.turn()
        XCTAssertEqual(h.pool.runQueued(where: { $0.label != "c" }), 2)
        h.turn()
        tiles[2].name = "c2"
        tiles[2].content = SolidContent(color: yellow)
        h.turn()
        XCTAssertFalse(h.compositor.composeCalls.contains { !tileColorsOrYellow($0).isEmpty }, "still held")
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["c"], "c2 waits for c's render in flight")

        // c's first render is superseded but not worthless: the page lands whole with it.
        XCTAssertEqual(h.pool.runQueued(), 1)
        h.turn()
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(h.compositor.pixel(x: 41, y: 1), xrgb(blue))
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))

        // Then c2 lands alone.
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 41, y: 1), xrgb(yellow))
        XCTAssertEqual(h.frontPixel(x: 41, y: 1), xrgb(yellow))
    }

    private func tileColorsOrYellow(_ call: RecordingCompositor.ComposeCall) -> Set<UInt32> {
        Set(call.itemColors).intersection([red, green, blue, yellow].map(premultipliedARGB))
    }

    func testALayerOutsideTheGroupIsNotHeld() throws {
        let h = try EngineHarness()
        _ = makePage(h)
        let outside = h.addSolidLayer("outside", frame: Rect(x: 0, y: 42, width: 6, height: 6), color: yellow)
        h.turn()
        XCTAssertEqual(h.pool.runQueued(where: { $0.label == "outside" }), 1)
        h.turn()
        XCTAssertNotNil(outside.renderedSurface)
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 43), xrgb(yellow))
    }

    func testTurningHoldingOffReleasesWhatWasHeld() throws {
        let h = try EngineHarness()
        let (page, _) = makePage(h)
        h.turn()
        XCTAssertEqual(h.pool.runQueued(where: { $0.label == "a" }), 1)
        h.turn()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(.black))
        page.holdsChildrenUntilReady = false
        h.pool.runQueued(where: { $0.label == "b" })
        h.turn()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
        XCTAssertEqual(h.compositor.pixel(x: 21, y: 1), xrgb(green))
    }
}
