import KioskCore
import KioskDisplay
import XCTest

/// A shared surface cache as KioskRender's decoded images are one: least recently inserted first, and a surface
/// counts as the cache's alone while nothing else holds it.
private final class FakeSharedCache: SharedSurfaceCache, @unchecked Sendable {
    var surfaces: [LayerSurface] = []

    var unsharedBytes: Int {
        var bytes = 0
        for index in surfaces.indices where isKnownUniquelyReferenced(&surfaces[index]) { bytes += surfaces[index].byteCount }
        return bytes
    }

    func evictUnshared(bytes wanted: Int) -> [LayerSurface] {
        var dropped: [LayerSurface] = []
        var index = 0
        while index < surfaces.count, dropped.reduce(0, { $0 + $1.byteCount }) < wanted {
            if isKnownUniquelyReferenced(&surfaces[index]) { dropped.append(surfaces.remove(at: index)) } else { index += 1 }
        }
        return dropped
    }
}

final class SharedCacheBudgetTests: XCTestCase {
    private var surfaceBytes: Int { EngineHarness.mode.size.width * EngineHarness.mode.size.height * 4 }

    /// Two pages, the first shown, and a shared cache registered with the engine, settled.
    private func makeRig() throws -> (EngineHarness, [Layer], FakeSharedCache) {
        let h = try EngineHarness()
        let pages = makeTiledPages(h, [("a", red), ("b", green)])
        let cache = FakeSharedCache()
        h.engine.sharedSurfaceCaches = [cache]
        h.settle()
        return (h, pages, cache)
    }

    func testWhatOnlyTheCacheHoldsCountsAndIsEvictedBeforeAnyPageAndFreedOnAWorker() throws {
        let (h, pages, cache) = try makeRig()
        // The cache holds the tile shown on screen (shared with its layer) and two images no layer shows.
        let shown = ObjectIdentifier(try XCTUnwrap(pages[0].children[0].renderedSurface))
        cache.surfaces = [try XCTUnwrap(pages[0].children[0].renderedSurface), LayerSurface(size: EngineHarness.mode.size),
                          LayerSurface(size: EngineHarness.mode.size)]
        weak var oldest = cache.surfaces[1]
        h.root.setNeedsRender()
        h.settle()
        XCTAssertEqual(h.stats.surfaces.totalBytes, 2 * surfaceBytes)
        XCTAssertEqual(h.stats.surfaces.cachedBytes, 2 * surfaceBytes, "the shared surface is counted once, with its layer")

        // Over by one surface: the oldest cache-only surface goes, no page is purged, the shared one stays.
        h.runsQueuedJobs = false
        h.engine.surfaceBudgetBytes = 3 * surfaceBytes
        pages[0].children[0].content = SolidContent(color: yellow)
        h.turn()
        XCTAssertEqual(cache.surfaces.count, 2)
        XCTAssertTrue(cache.surfaces.contains { ObjectIdentifier($0) == shown }, "the surface on screen stays cached")
        XCTAssertFalse(h.engine.isPurged(pages[1]))
        XCTAssertEqual(h.engine.surfaceStatistics.cacheEvictions, 1)
        XCTAssertEqual(h.engine.surfaceStatistics.cacheEvictedBytes, surfaceBytes)
        XCTAssertEqual(h.engine.surfaceStatistics.budgetPurges, 0)
        XCTAssertNotNil(oldest, "freed by the release job, not on the main thread")
        XCTAssertGreaterThanOrEqual(h.pool.runQueued(), 1)
        XCTAssertNil(oldest)
    }

    func testAPurgedPagesImagesLeftInTheCacheAreEvictedWhenStillOverBudget() throws {
        let (h, pages, cache) = try makeRig()
        // Page b's tile is also in the cache, as a decoded image shown on it would be.
        cache.surfaces = [try XCTUnwrap(pages[1].children[0].renderedSurface)]
        XCTAssertEqual(h.engine.surfaceStatistics.cachedBytes, 0, "a surface a layer shows is not the cache's alone")

        // Room for the page on screen only: b is purged; once its release job has run its tile is the cache's
        // alone, and is evicted at the next commit.
        h.engine.surfaceBudgetBytes = surfaceBytes
        pages[0].children[0].content = SolidContent(color: yellow)
        h.settle()
        XCTAssertTrue(h.engine.isPurged(pages[1]))
        pages[0].children[0].content = SolidContent(color: blue)
        h.settle()
        XCTAssertTrue(cache.surfaces.isEmpty)
        XCTAssertEqual(h.engine.surfaceStatistics.cacheEvictions, 1)
        XCTAssertEqual(h.engine.surfaceStatistics.cachedBytes, 0)
        XCTAssertEqual(h.engine.surfaceStatistics.totalBytes, surfaceBytes)
        XCTAssertFalse(h.engine.isPurged(pages[0]))
    }
}
