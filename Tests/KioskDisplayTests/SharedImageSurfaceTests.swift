import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import XCTest

/// Layers showing the same image file at the same size and fit share one decoded surface: the engine shows the
/// decoded-image cache's surface as it is, and surface memory counts it once.
final class SharedImageSurfaceTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "kioskd-shared-image-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        XCTAssertEqual(mkdir(directory, 0o755), 0)
        ImageContent.purgeCache()
    }

    override func tearDown() {
        ImageContent.purgeCache()
        _ = try? FileManager.default.removeItem(atPath: directory)
    }

    /// A 16x12 PNG of one colour (XRGB).
    private func writePNG(_ name: String, xrgb: UInt32) throws -> String {
        let size = Size(width: 16, height: 12)
        var bytes: [UInt8] = []
        for _ in 0..<(size.width * size.height) {
            bytes += [UInt8(xrgb & 0xFF), UInt8((xrgb >> 8) & 0xFF), UInt8((xrgb >> 16) & 0xFF), 0xFF]
        }
        let path = directory + "/" + name
        try Data(try encodePNG(xrgb8888: bytes, size: size, stride: size.width * 4)).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testTwoWidgetsShowingOneFileAtOneSizeShareTheirSurface() throws {
        let path = try writePNG("logo.png", xrgb: 0x00FF00)
        let h = try CompositionHarness()
        let a = Layer(frame: Rect(x: 0, y: 0, width: 20, height: 15), content: ImageContent(path: path, fit: .fill), name: "a")
        let b = Layer(frame: Rect(x: 30, y: 20, width: 20, height: 15), content: ImageContent(path: path, fit: .fill), name: "b")
        let other = Layer(frame: Rect(x: 30, y: 0, width: 10, height: 8), content: ImageContent(path: path, fit: .fill), name: "small")
        for layer in [a, b, other] { h.engine.rootLayer.addChild(layer) }
        h.settle()
        let shared = try XCTUnwrap(a.renderedSurface)
        XCTAssertTrue(b.renderedSurface === shared, "the same file at the same size and fit: one surface")
        XCTAssertFalse(other.renderedSurface === shared, "another size is another surface")
        XCTAssertEqual(h.front(10, 7), 0x00FF00)
        XCTAssertEqual(h.front(40, 27), 0x00FF00)
        XCTAssertEqual(h.engine.surfaceStatistics.totalBytes, shared.byteCount + (other.renderedSurface?.byteCount ?? 0),
                       "a shared surface is counted once")
        // Purging one layer's page leaves the other showing it.
        let page = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "page")
        a.removeFromParent()
        page.addChild(a)
        page.isHidden = true
        h.engine.rootLayer.addChild(page)
        h.settle()
        XCTAssertTrue(h.engine.purgeSurfaces(of: page))
        h.settle()
        XCTAssertNil(a.renderedSurface)
        XCTAssertTrue(b.renderedSurface === shared)
        XCTAssertEqual(h.front(40, 27), 0x00FF00)
    }

    func testAFileChangedOnDiskIsDecodedAgainAndTheOldSurfaceIsNotWritten() throws {
        let path = try writePNG("sign.png", xrgb: 0xFF0000)
        let h = try CompositionHarness()
        let a = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 12), content: ImageContent(path: path, fit: .fill), name: "a")
        h.engine.rootLayer.addChild(a)
        h.settle()
        let before = try XCTUnwrap(a.renderedSurface)
        let firstPixel = before.pixel(x: 0, y: 0)
        // Rewritten with another colour and another modification time.
        _ = try writePNG("sign.png", xrgb: 0x0000FF)
        var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
        XCTAssertEqual(utimensat(AT_FDCWD, path, &times, 0), 0)
        a.content = ImageContent(path: path, fit: .fill)
        h.settle()
        let after = try XCTUnwrap(a.renderedSurface)
        XCTAssertFalse(after === before)
        XCTAssertEqual(h.front(8, 6), 0x0000FF)
        XCTAssertEqual(before.pixel(x: 0, y: 0), firstPixel, "a surface once shown is never written again")
    }

    func testTheBudgetAnswersForImagesOnlyTheCacheStillHolds() throws {
        let path = try writePNG("poster.png", xrgb: 0x0000FF)
        let h = try CompositionHarness()
        h.engine.sharedSurfaceCaches = [ImageContent.sharedSurfaceCache]
        let page = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "page")
        let poster = Layer(frame: Rect(x: 0, y: 0, width: 32, height: 24), content: ImageContent(path: path, fit: .fill), name: "poster")
        page.addChild(poster)
        let label = Layer(frame: Rect(x: 40, y: 30, width: 8, height: 8), content: HalvesContent(0xFFFF0000), name: "label")
        h.engine.rootLayer.addChild(page)
        h.engine.rootLayer.addChild(label)
        h.engine.registerRangeRoot(page, name: "page")
        h.settle()
        let bytes = try XCTUnwrap(poster.renderedSurface).byteCount
        XCTAssertEqual(h.engine.surfaceStatistics.cachedBytes, 0, "shown by its layer: not the cache's alone")

        // The page leaves the screen and is purged: its image lives on in the cache alone, and counts.
        page.isHidden = true
        h.settle()
        XCTAssertTrue(h.engine.purgeSurfaces(of: page))
        h.settle()
        XCTAssertEqual(h.engine.surfaceStatistics.cachedBytes, bytes)
        XCTAssertEqual(ImageContent.cacheStatistics.entries, 1)

        // Over the budget it is evicted at the next commit.
        h.engine.surfaceBudgetBytes = 1
        label.content = HalvesContent(0xFF00FF00)
        h.settle()
        XCTAssertEqual(ImageContent.cacheStatistics.entries, 0)
        XCTAssertEqual(h.engine.surfaceStatistics.cacheEvictions, 1)
        XCTAssertEqual(h.engine.surfaceStatistics.cacheEvictedBytes, bytes)
        XCTAssertEqual(h.engine.surfaceStatistics.cachedBytes, 0)

        // Shown again, it is decoded again; on screen, it stays cached however small the budget.
        page.isHidden = false
        h.engine.restoreSurfaces(of: page)
        h.settle()
        XCTAssertEqual(h.front(10, 10), 0x0000FF)
        label.content = HalvesContent(0xFFFF0000)
        h.settle()
        XCTAssertEqual(ImageContent.cacheStatistics.entries, 1)
        XCTAssertEqual(h.engine.surfaceStatistics.cacheEvictions, 1)
    }
}
