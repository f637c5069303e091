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
        for _ in 0..<10 { layer.setNeedsDisplay() }
        XCTAssertEqual(h.engine.transaction.pendingDisplayCount, 1, "one entry per layer, however often it asks")
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["badge"])
        h.settle()

        XCTAssertEqual(layer.sentinel.value, sentinelBefore + 10, "every request cancels what came before it")
        XCTAssertEqual(h.stats.rendersStarted, 2)
        XCTAssertEqual(h.stats.rendersCompleted, 2)
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(draws.value, 2)
    }

    func testRequestsFromSeveralLayersInOneIterationRenderEachOnce() throws {
        let h = try EngineHarness()
        let layers = (0..<3).map { h.addSolidLayer("l\($0)", frame: Rect(x: $0 * 10, y: 0, width: 8, height: 8), color: red) }
        h.settle()
        for _ in 0..<5 { for layer in layers { layer.setNeedsDisplay() } }
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["l0", "l1", "l2"])
    }

    func testRenderOvertakenByANewerRequestIsDroppedAndTheNewerShown() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("red", frame: Rect(x: 4, y: 4, width: 10, height: 10), color: red)
        var displayed: [Bool] = []
        layer.didDisplay = { _, finished in displayed.append(finished) }
        h.turn()
        XCTAssertEqual(h.pool.queuedJobCount, 1, "the red render is queued")

        layer.name = "green"
        layer.content = SolidContent(color: green)
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["red", "green"], "green is dispatched without waiting for red")

        // The newer render finishes first; the older one comes back afterwards and must not cover it.
        XCTAssertEqual(h.pool.runQueued(where: { $0.label == "green" }), 1)
        h.turn()
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), xrgb(green))
        XCTAssertEqual(h.pool.runQueued(), 1)
        h.settle()

        XCTAssertEqual(h.stats.rendersStarted, 2)
        XCTAssertEqual(h.stats.rendersCompleted, 2)
        XCTAssertEqual(h.stats.staleRendersDropped, 1)
        XCTAssertEqual(displayed, [true, false], "green landed, then red came back and was dropped")
        XCTAssertEqual(layer.renderedSurface?.pixel(x: 0, y: 0), premultipliedARGB(green))
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), xrgb(green))
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(green))
        XCTAssertFalse(h.compositor.composeCalls.contains { !$0.frames(painting: red).isEmpty }, "red never reached a composition")
    }

    func testRenderOvertakenWhileDrawingOnAWorkerIsDropped() throws {
        let h = try EngineHarness(pool: RenderQueuePool(strategy: .roundRobin, workerCount: 2))
        let gate = Gate()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 16), content: GatedContent(color: red, gate: gate), name: "slow")
        h.root.addChild(layer)
        h.turn()
        XCTAssertTrue(gate.waitForArrivals(1), "the first render is drawing")

        layer.content = SolidContent(color: green)
        h.turn()
        // The green render runs on the other worker and lands while the red one is still drawing.
        // The worker's wake-up is taken by the loop the harness turns by hand: poll it with a deadline.
        try waitByPolling(for: "the green render to land", timeout: 10, interval: 0.0005) {
            if layer.renderedSurface != nil { return true }
            h.turn()
            return layer.renderedSurface != nil
        }
        XCTAssertEqual(layer.renderedSurface?.pixel(x: 0, y: 0), premultipliedARGB(green))

        gate.open()
        XCTAssertTrue(h.pool.waitUntilIdle())
        h.settle()
        XCTAssertEqual(h.stats.staleRendersDropped, 1)
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
        weak var weakLayer: Layer?
        do {
            let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: GatedContent(color: red, gate: gate))
            weakLayer = layer
            h.root.addChild(layer)
            h.turn()
            XCTAssertTrue(gate.waitForArrivals(1))
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

    func testSentinelCaptureIsCancelledByIncrease() {
        let sentinel = Sentinel()
        let capture = sentinel.capture()
        XCTAssertFalse(capture.isCancelled())
        sentinel.increase()
        XCTAssertTrue(capture.isCancelled())
        XCTAssertFalse(sentinel.capture().isCancelled())
    }

    func testFailedRenderIsCountedAndLeavesThePlaceholder() throws {
        let h = try EngineHarness()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: FailingContent(), name: "broken")
        layer.placeholderColor = grey
        var displayed: [Bool] = []
        layer.didDisplay = { _, finished in displayed.append(finished) }
        h.root.addChild(layer)
        h.settle()
        XCTAssertEqual(h.stats.rendersFailed, 1)
        XCTAssertEqual(h.stats.staleRendersDropped, 0)
        XCTAssertEqual(displayed, [false])
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(grey))
    }
}
