import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

final class CoalescingAndSentinelTests: XCTestCase {
    func testTenRequestsInOneIterationRenderOnce() throws {
        let h = try EngineHarness()
        let draws = Counter()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: SolidContent(color: red, draws: draws), name: "badge")
        h.root.addChild(layer)
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, 1)
        XCTAssertEqual(draws.value, 1)

        let sentinelBefore = layer.sentinel.value
        for _ in 0..<10 { layer.setNeedsRender() }
        XCTAssertEqual(h.engine.transaction.pendingRenderCount, 1, "one entry per layer, however often it asks")
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["badge"])
        h.settle()

        XCTAssertEqual(layer.sentinel.value, sentinelBefore + 10, "every request is a new generation")
        XCTAssertEqual(h.stats.rendersStarted, 2)
        XCTAssertEqual(h.stats.rendersCompleted, 2)
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(draws.value, 2)
    }

    func testRequestsFromSeveralLayersInOneIterationRenderEachOnce() throws {
        let h = try EngineHarness()
        let layers = (0..<3).map { h.addSolidLayer("l\($0)", frame: Rect(x: $0 * 10, y: 0, width: 8, height: 8), color: red) }
        h.settle()
        for _ in 0..<5 { for layer in layers { layer.setNeedsRender() } }
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["l0", "l1", "l2"])
    }

    func testARequestWhileARenderIsInFlightWaitsForItAndDrawsTheNewestData() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("red", frame: Rect(x: 4, y: 4, width: 10, height: 10), color: red)
        var displayed: [Bool] = []
        layer.didRender = { _, finished in displayed.append(finished) }
        h.turn()
        XCTAssertEqual(h.pool.queuedJobCount, 1, "the red render is queued")

        layer.name = "green"
        layer.content = SolidContent(color: green)
        h.turn()
        layer.name = "yellow"
        layer.content = SolidContent(color: yellow)
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["red"], "one render in flight per layer; the newer request waits")
        XCTAssertTrue(layer.needsRender)

        // The render in flight is not thrown away because newer data arrived: it is the newest finished one.
        XCTAssertEqual(h.pool.runQueued(), 1)
        h.turn()
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), xrgb(red))
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["yellow"], "the pending render draws the newest data; green is never drawn")
        h.settle()

        XCTAssertEqual(h.stats.rendersStarted, 2)
        XCTAssertEqual(h.stats.rendersCompleted, 2)
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(displayed, [true, true])
        XCTAssertEqual(layer.renderedSurface?.pixel(x: 0, y: 0), premultipliedARGB(yellow))
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(yellow))
        XCTAssertFalse(h.compositor.composeCalls.contains { !$0.frames(painting: green).isEmpty }, "green never reached a composition")
    }

    func testAnOlderResultArrivingAfterANewerOneIsShownIsDropped() throws {
        let h = try EngineHarness()
        let (_, tiles) = makeHeldPage(h)
        let tile = tiles[0]
        h.turn()
        // The page's first batch waits for b; meanwhile a gets newer data and its first render comes back.
        XCTAssertEqual(h.pool.runQueued(where: { $0.label == "a" }), 1)
        h.turn()
        tile.name = "a2"
        tile.content = SolidContent(color: yellow)
        h.turn()
        XCTAssertEqual(h.pool.runQueued(where: { $0.label == "a2" }), 1, "a's second render is not held by the group")
        h.turn()
        XCTAssertEqual(h.pool.runQueued(), 1)
        h.settle()
        XCTAssertEqual(h.stats.staleRendersDropped, 1, "the held first render of a is older than the one shown")
        XCTAssertEqual(h.frontPixel(x: 1, y: 1), xrgb(yellow))
        XCTAssertEqual(h.frontPixel(x: 21, y: 1), xrgb(green))
    }

    private func makeHeldPage(_ h: EngineHarness) -> (Layer, [Layer]) {
        let page = Layer(frame: Rect(x: 0, y: 0, width: 60, height: 40), name: "page")
        page.holdsChildrenUntilReady = true
        let tiles = [("a", red), ("b", green)].enumerated().map { index, entry in
            Layer(frame: Rect(x: index * 20, y: 0, width: 16, height: 16), content: SolidContent(color: entry.1), name: entry.0)
        }
        for tile in tiles { page.addChild(tile) }
        h.root.addChild(page)
        return (page, tiles)
    }

    func testARenderDrawingOnAWorkerIsNotCancelledByANewerRequest() throws {
        let h = try EngineHarness(pool: RenderQueuePool(strategy: .roundRobin, workerCount: 2))
        let gate = Gate()
        defer { gate.open() }
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 16), content: GatedContent(color: red, gate: gate), name: "slow")
        h.root.addChild(layer)
        h.turn()
        try gate.waitForArrivals(1)  // the first render is drawing

        layer.content = SolidContent(color: green)
        h.turn()
        XCTAssertEqual(h.pool.outstandingJobCount, 1, "the newer request waits for the render in flight")
        gate.open()
        // The worker's wake-up is taken by the loop the harness turns by hand: poll it with a deadline.
        var sawRed = false
        try Poll.until("the green render to land", timeout: 10, interval: 0.0005) {
            if layer.renderedSurface?.pixel(x: 0, y: 0) == premultipliedARGB(red) { sawRed = true }
            if layer.renderedSurface?.pixel(x: 0, y: 0) == premultipliedARGB(green) { return true }
            h.turn()
            return layer.renderedSurface?.pixel(x: 0, y: 0) == premultipliedARGB(green)
        }
        XCTAssertTrue(sawRed, "the render in flight finished and was shown")
        h.settle()
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(h.stats.rendersCompleted, 2)
        XCTAssertEqual(layer.renderedSurface?.pixel(x: 0, y: 0), premultipliedARGB(green))
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(green))
    }

    func testLayerRemovedMidRenderIsFreedAndItsResultDropped() throws {
        let h = try EngineHarness()
        weak var weakLayer: Layer?
        do {
            let layer = h.addSolidLayer("doomed", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red)
            weakLayer = layer
            h.turn()
            XCTAssertEqual(h.pool.queuedJobCount, 1)
            layer.removeFromParent()
        }
        XCTAssertNil(weakLayer, "a queued render does not keep its layer alive")

        XCTAssertEqual(h.pool.runQueued(), 1)
        h.settle()
        XCTAssertEqual(h.stats.rendersCompleted, 1)
        XCTAssertEqual(h.stats.staleRendersDropped, 1)
        XCTAssertFalse(h.compositor.composeCalls.contains { !$0.frames(painting: red).isEmpty })
    }

    func testLayerFreedWhileItsRenderIsDrawingOnAWorker() throws {
        let h = try EngineHarness(pool: RenderQueuePool(strategy: .priority, workerCount: 1))
        let gate = Gate()
        defer { gate.open() }
        weak var weakLayer: Layer?
        do {
            let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: GatedContent(color: red, gate: gate))
            weakLayer = layer
            h.root.addChild(layer)
            h.turn()
            try gate.waitForArrivals(1)
            layer.removeFromParent()
        }
        XCTAssertNil(weakLayer, "the drawing worker does not hold the layer")
        gate.open()
        XCTAssertTrue(h.pool.waitUntilIdle())
        h.settle()
        XCTAssertEqual(h.stats.rendersCompleted, 1)
        XCTAssertEqual(h.stats.staleRendersDropped, 1)
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(.black))
    }

    func testSentinelIncreaseSupersedesAndInvalidateCancels() {
        let sentinel = Sentinel()
        let capture = sentinel.capture()
        XCTAssertFalse(capture.isCancelled())
        XCTAssertFalse(capture.isSuperseded())
        sentinel.increase()
        XCTAssertTrue(capture.isSuperseded())
        XCTAssertFalse(capture.isCancelled(), "a newer request does not make a render worthless")
        let later = sentinel.capture()
        sentinel.invalidate()
        XCTAssertTrue(capture.isCancelled())
        XCTAssertTrue(later.isCancelled())
        XCTAssertFalse(sentinel.capture().isCancelled())
    }

    func testContentRemovedMidRenderDropsTheResult() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("gone", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red)
        h.turn()
        layer.content = nil
        XCTAssertEqual(h.pool.runQueued(), 1)
        h.settle()
        XCTAssertEqual(h.stats.staleRendersDropped, 1)
        XCTAssertNil(layer.renderedSurface)
        XCTAssertEqual(h.frontPixel(x: 1, y: 1), xrgb(.black))
    }

    func testFailedRenderIsCountedAndLeavesThePlaceholder() throws {
        let h = try EngineHarness()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: FailingContent(), name: "broken")
        layer.placeholderColor = grey
        var displayed: [Bool] = []
        layer.didRender = { _, finished in displayed.append(finished) }
        h.root.addChild(layer)
        h.settle()
        XCTAssertEqual(h.stats.rendersFailed, 1)
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(displayed, [false])
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(grey))
    }
}
