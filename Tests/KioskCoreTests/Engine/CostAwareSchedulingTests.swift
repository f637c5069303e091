import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// A clock the render workers read (`LayerEngine.renderClock`), moved only by the test: a render takes as long as
/// the test advances it while the render is held at a gate.
final class ManualRenderClock: Sendable {
    private let instant: Lock<MonotonicInstant>

    init(at start: MonotonicInstant) { instant = Lock(start) }

    var renderClock: RenderClock { RenderClock { [instant] in instant.withLock { $0 } } }

    func advance(by duration: Duration) { instant.withLock { $0 = $0 + duration } }
}

/// The engine tells the render pool which renders are long from each layer's recent render times, and the pool
/// never queues a short render behind a long one while a worker could take it (RenderJobQueue).
final class CostAwareSchedulingTests: XCTestCase {
    func testAShortRenderRequestedWhileALongOneIsInFlightOnOneWorkerOfTwoCompletesFirst() throws {
        let h = try EngineHarness(pool: RenderQueuePool(strategy: .roundRobin, workerCount: 2))
        let clock = ManualRenderClock(at: h.loop.now)
        h.engine.renderClock = clock.renderClock
        let stormGate = Gate(), labelGate = Gate(), longGate = Gate()
        defer { stormGate.open(); labelGate.open(); longGate.open() }

        let label = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 16), content: SolidContent(color: red), name: "label")
        let seconds = Layer(frame: Rect(x: 16, y: 0, width: 16, height: 16), content: SolidContent(color: green), name: "clock")
        h.root.addChild(label)
        h.root.addChild(seconds)
        h.settle()  // their renders take no time on the render clock: known to be short

        // The storm's first render takes 150 ms on the render clock: known to be long from then on.
        let storm = Layer(frame: Rect(x: 32, y: 0, width: 32, height: 48), content: GatedContent(color: blue, gate: longGate), name: "storm")
        h.root.addChild(storm)
        h.turn()
        try longGate.waitForArrivals(1)
        clock.advance(by: .milliseconds(150))
        longGate.open()
        h.settle()

        var completed: [String] = []
        for layer in [label, seconds, storm] {
            layer.didRender = { layer, finished in if finished { completed.append(layer.name ?? "?") } }
        }
        // A long render in flight on one worker, a short one on the other.
        storm.content = GatedContent(color: yellow, gate: stormGate)
        label.content = GatedContent(color: grey, gate: labelGate)
        h.turn()
        try stormGate.waitForArrivals(1)
        try labelGate.waitForArrivals(1)
        XCTAssertEqual(h.pool.runningJobCount, 2)

        // The clock's render, requested after them, waits for a worker...
        seconds.content = SolidContent(color: red)
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["clock"])
        XCTAssertEqual(h.pool.queuedJobs.first?.isLong, false)
        // ...and takes the first one free, not a place behind the long render.
        labelGate.open()
        try Poll.until("the clock's render to complete while the storm's is in flight", timeout: 10, interval: 0.001,
                       reading: { h.turn(); return completed }, satisfies: { $0.contains("clock") })
        XCTAssertEqual(completed, ["label", "clock"], "the storm's render is still in flight")
        XCTAssertEqual(h.engine.rendersInFlight, 1)

        stormGate.open()
        h.settle()
        XCTAssertEqual(completed, ["label", "clock", "storm"])
    }

    /// With one worker, a long render asked for while a short one is in flight waits for it: the short layer's next
    /// request, which waits for its render in flight to come back, then goes first, and the short widget never waits
    /// for a whole long render more than once.
    func testWithOneWorkerALongRenderWaitsForTheShortRenderInFlightAndItsNextRequest() throws {
        let h = try EngineHarness(pool: RenderQueuePool(strategy: .roundRobin, workerCount: 1))
        let clock = ManualRenderClock(at: h.loop.now)
        h.engine.renderClock = clock.renderClock
        let longGate = Gate(), labelGate = Gate()
        defer { longGate.open(); labelGate.open() }
        let label = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 16), content: SolidContent(color: red), name: "label")
        let storm = Layer(frame: Rect(x: 32, y: 0, width: 32, height: 48), content: GatedContent(color: blue, gate: longGate), name: "storm")
        h.root.addChild(label)
        h.root.addChild(storm)
        h.turn()
        try longGate.waitForArrivals(1)
        clock.advance(by: .milliseconds(150))  // the storm's first render: long
        longGate.open()
        h.settle()

        var completed: [String] = []
        for layer in [label, storm] {
            layer.didRender = { layer, finished in if finished { completed.append(layer.name ?? "?") } }
        }
        label.content = GatedContent(color: grey, gate: labelGate)
        h.turn()
        try labelGate.waitForArrivals(1)
        // While the label's render runs: its next data, and the storm's.
        label.content = SolidContent(color: green)
        storm.content = SolidContent(color: yellow)
        h.turn()
        XCTAssertEqual(h.pool.queuedJobs, [], "the storm's render waits for the label's in flight")
        labelGate.open()
        try Poll.until("every render to come back", timeout: 10, interval: 0.001,
                       reading: { h.turn(); return completed }, satisfies: { $0.count == 3 })
        XCTAssertEqual(completed, ["label", "label", "storm"])
        h.settle()
    }
}
