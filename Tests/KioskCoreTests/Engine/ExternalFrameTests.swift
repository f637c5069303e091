import KioskCore
import XCTest

/// `LayerEngine.showExternalSurface`: a surface made outside the render pool (a decoded video frame) is shown in
/// the next composition, counted as shown when a present carries it and as not shown when a newer one replaced it
/// first; a late render of the layer's own content does not cover it.
final class ExternalFrameTests: XCTestCase {
    private func surface(_ color: Color, size: Size) -> LayerSurface {
        let surface = LayerSurface(size: size, isOpaque: true)
        try? SolidContent(color: color).draw(into: surface, isCancelled: { false })
        return surface
    }

    func testAFrameIsPresentedAndReportedShown() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("video", frame: Rect(x: 0, y: 0, width: 16, height: 16), color: grey)
        h.settle()
        var shown: [Bool] = []
        h.engine.showExternalSurface(surface(red, size: Size(width: 16, height: 16)), on: layer) { shown.append($0) }
        h.settle()
        XCTAssertEqual(shown, [true])
        XCTAssertEqual(h.frontPixel(x: 4, y: 4), xrgb(red))
        XCTAssertEqual(h.stats.rendersStarted, 1, "the frame needed no render job")
    }

    func testAFrameReplacedBeforeAnyPresentIsReportedNotShown() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("video", frame: Rect(x: 0, y: 0, width: 16, height: 16), color: grey)
        h.settle()
        var shown: [String: Bool] = [:]
        h.engine.showExternalSurface(surface(red, size: Size(width: 16, height: 16)), on: layer) { shown["red"] = $0 }
        h.engine.showExternalSurface(surface(blue, size: Size(width: 16, height: 16)), on: layer) { shown["blue"] = $0 }
        h.settle()
        XCTAssertEqual(shown, ["red": false, "blue": true])
        XCTAssertEqual(h.frontPixel(x: 4, y: 4), xrgb(blue))
    }

    func testARenderInFlightDoesNotCoverTheFrameButNewContentDoes() throws {
        let h = try EngineHarness()
        h.runsQueuedJobs = false
        let layer = h.addSolidLayer("video", frame: Rect(x: 0, y: 0, width: 16, height: 16), color: grey)
        h.settleNow()
        XCTAssertEqual(h.engine.rendersInFlight, 1)
        h.engine.showExternalSurface(surface(red, size: Size(width: 16, height: 16)), on: layer)
        h.runsQueuedJobs = true
        h.settle()
        XCTAssertEqual(h.frontPixel(x: 4, y: 4), xrgb(red), "the older render of the placeholder was dropped")
        layer.content = SolidContent(color: green)
        h.settle()
        XCTAssertEqual(h.frontPixel(x: 4, y: 4), xrgb(green), "content set afterwards renders over the frame")
    }

    func testFramesWaitingWhenTheEngineStopsAreReportedNotShown() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("video", frame: Rect(x: 0, y: 0, width: 16, height: 16), color: grey)
        h.settle()
        var shown: [Bool] = []
        h.engine.showExternalSurface(surface(red, size: Size(width: 16, height: 16)), on: layer) { shown.append($0) }
        h.engine.stop()
        XCTAssertEqual(shown, [false])
        h.engine.showExternalSurface(surface(red, size: Size(width: 16, height: 16)), on: layer) { shown.append($0) }
        XCTAssertEqual(shown, [false, false])
    }
}
