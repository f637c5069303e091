import KioskCore
import KioskDisplay
import XCTest

/// Pages of the harness's size, each one full-screen tile of its colour and registered as a range root under its
/// name; the first shown, the others hidden.
func makeTiledPages(_ h: EngineHarness, _ pages: [(String, Color)]) -> [Layer] {
    let size = EngineHarness.mode.size
    return pages.enumerated().map { index, entry in
        let page = Layer(frame: Rect(size: size), name: "page \(entry.0)")
        page.addChild(Layer(frame: Rect(size: size), content: SolidContent(color: entry.1), name: "tile \(entry.0)"))
        page.isHidden = index != 0
        h.root.addChild(page)
        h.engine.registerRangeRoot(page, name: entry.0)
        return page
    }
}

/// Purging and restoring subtrees' surfaces, the surface budget, and releasing purged surfaces off the main thread.
final class SurfaceBudgetTests: XCTestCase {
    private func makePages(_ h: EngineHarness) -> [Layer] { makeTiledPages(h, [("a", red), ("b", green), ("c", blue)]) }

    private var surfaceBytes: Int { EngineHarness.mode.size.width * EngineHarness.mode.size.height * 4 }

    func testWhatIsOnScreenIsNeverPurgedAndAPurgedPageRendersNothingUntilRestored() throws {
        let h = try EngineHarness()
        let pages = makePages(h)
        h.settle()
        XCTAssertEqual(h.stats.surfaces.totalBytes, 3 * surfaceBytes)
        XCTAssertFalse(h.engine.purgeSurfaces(of: pages[0]), "the page on screen is not purged")
        XCTAssertNotNil(pages[0].children[0].renderedSurface)

        XCTAssertTrue(h.engine.purgeSurfaces(of: pages[1]))
        h.settle()
        XCTAssertNil(pages[1].children[0].renderedSurface)
        XCTAssertEqual(h.stats.surfaces.byRoot, ["a": surfaceBytes, "c": surfaceBytes])
        XCTAssertEqual(h.stats.surfaces.purges, 1)
        XCTAssertEqual(h.stats.surfaces.purgedBytes, surfaceBytes)

        // New content for the purged page waits; it does not count as rendering.
        let started = h.stats.rendersStarted
        pages[1].children[0].content = SolidContent(color: yellow)
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, started)
        XCTAssertFalse(h.engine.isRendering(h.root))

        // Restored: rendering until its newest content is back.
        h.engine.restoreSurfaces(of: pages[1])
        XCTAssertTrue(h.engine.isRendering(pages[1]))
        h.settle()
        XCTAssertFalse(h.engine.isRendering(pages[1]))
        XCTAssertEqual(pages[1].children[0].renderedSurface?.pixel(x: 0, y: 0), premultipliedARGB(yellow))
        XCTAssertEqual(h.stats.surfaces.rerenders, 1)
    }

    func testOverBudgetPurgesLeastRecentlyShownAndNeverWhatIsOnScreen() throws {
        let h = try EngineHarness()
        let pages = makePages(h)
        h.settle()
        // Show c, then a again: b was shown least recently (never), then c.
        pages[0].isHidden = true
        pages[2].isHidden = false
        h.settle()
        pages[2].isHidden = true
        pages[0].isHidden = false
        h.settle()

        h.engine.surfaceBudgetBytes = 2 * surfaceBytes
        h.root.setNeedsRender()
        h.settle()
        XCTAssertTrue(h.engine.isPurged(pages[1]), "b, least recently shown, goes first")
        XCTAssertFalse(h.engine.isPurged(pages[2]))
        XCTAssertEqual(h.stats.surfaces.budgetPurges, 1)

        // A budget smaller than the page on screen purges everything else and keeps what is shown.
        h.engine.surfaceBudgetBytes = surfaceBytes / 2
        h.root.setNeedsRender()
        h.settle()
        XCTAssertTrue(h.engine.isPurged(pages[2]))
        XCTAssertFalse(h.engine.isPurged(pages[0]))
        XCTAssertNotNil(pages[0].children[0].renderedSurface)
        XCTAssertEqual(h.stats.surfaces.totalBytes, surfaceBytes)
        let screen = try XCTUnwrap(h.backend.frontBufferSnapshot())
        let o = (EngineHarness.mode.size.width + 1) * 4
        XCTAssertEqual(UInt32(screen[o]) | UInt32(screen[o + 1]) << 8 | UInt32(screen[o + 2]) << 16, xrgb(red),
                       "the page on screen is still shown")
    }

    func testAPurgeNeverDelaysAPresentTheSurfacesAreFreedOnAWorker() throws {
        let h = try EngineHarness()
        let pages = makePages(h)
        h.settle()
        weak var purged = pages[1].children[0].renderedSurface
        XCTAssertNotNil(purged)
        // The purge and a change on screen in the same turn; the worker that frees the surfaces has not run.
        h.runsQueuedJobs = false
        let presents = h.backend.presentCount
        let flipped = h.stats.framesFlipped
        XCTAssertTrue(h.engine.purgeSurfaces(of: pages[1]))
        pages[0].opacity = 0.5
        h.turn()
        XCTAssertEqual(h.backend.presentCount, presents + 1, "the frame is presented in the turn of the purge")
        XCTAssertNotNil(purged, "the purged surface is still alive: it is freed by the release job, not on this thread")
        XCTAssertEqual(h.pool.queuedJobCount, 1)
        h.completeFlip()
        XCTAssertEqual(h.stats.framesFlipped, flipped + 1, "its flip completes before the surfaces are freed")
        XCTAssertNotNil(purged)
        XCTAssertEqual(h.pool.runQueued(), 1)
        XCTAssertNil(purged, "freed by the release job")
    }
}
