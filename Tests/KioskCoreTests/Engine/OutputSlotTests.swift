import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// Several outputs on one fake card: one slot per connector, each its own engine, tree and pacing, on one loop and
/// one render pool. Each composes its own scene at its own mode's size, flips at its own mode's rate, and keeps
/// flipping while the other is unplugged and plugged in again.
final class OutputSlotTests: XCTestCase {
    static let hdmi = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)
    static let panel = OutputMode(width: 100, height: 50, refreshMilliHz: 50_000)

    func testEachOutputComposesItsOwnSceneAtItsOwnSize() throws {
        let h = try SlotHarness()
        h.slots.rescan()
        let (a, b) = (h.slots.slots[0], h.slots.slots[1])
        h.addLayer(to: a.engine, color: OutputLifecycleTests.red)
        h.addLayer(to: b.engine, color: OutputLifecycleTests.blue)
        h.settle()
        XCTAssertEqual(a.engine.backend?.info.connector, "HDMI-A-1")
        XCTAssertEqual(b.engine.backend?.info.connector, "DSI-1")
        XCTAssertEqual(a.engine.rootLayer.frame.size, Self.hdmi.size)
        XCTAssertEqual(b.engine.rootLayer.frame.size, Self.panel.size, "laid out for its own mode")
        XCTAssertEqual(h.frontPixel(a, x: 5, y: 5), xrgb(OutputLifecycleTests.red))
        XCTAssertEqual(h.frontPixel(b, x: 5, y: 5), xrgb(OutputLifecycleTests.blue))
        XCTAssertEqual(h.frontPixel(b, x: 99, y: 49), xrgb(OutputLifecycleTests.grey), "its whole screen was drawn")
        XCTAssertGreaterThan(a.engine.stats.framesFlipped, 0)
        XCTAssertGreaterThan(b.engine.stats.framesFlipped, 0)
        XCTAssertEqual(h.card.liveOutputs, 2)
        XCTAssertEqual(h.events.map(\.connector), ["HDMI-A-1", "DSI-1"])
        XCTAssertTrue(try h.slots.slot(named: nil) === a, "no output named: the first")
        XCTAssertTrue(try h.slots.slot(named: "DSI-1") === b)
        XCTAssertTrue(try h.slots.slot(named: "dsi-1") === b, "names are matched in any case")
        XCTAssertThrowsError(try h.slots.slot(named: "DP-1")) {
            XCTAssertEqual("\($0)", "no output named 'DP-1'; outputs: HDMI-A-1, DSI-1")
        }
    }

    func testEachOutputFlipsAtItsOwnModesRate() throws {
        let h = try SlotHarness()
        h.slots.rescan()
        for slot in h.slots.slots {
            let layer = h.addLayer(to: slot.engine, color: OutputLifecycleTests.red)
            slot.engine.addAnimation(target: layer) { layer, _ in
                layer.opacity = layer.opacity == 1 ? 0.5 : 1
                return true
            }
        }
        h.settleNow()
        let before = h.slots.slots.map(\.engine.stats.framesFlipped)
        h.run(for: .seconds(2))
        let flipped = zip(h.slots.slots, before).map { $0.engine.stats.framesFlipped - $1 }
        XCTAssertEqual(Double(flipped[0]), 120, accuracy: 2, "HDMI-A-1 at 60 Hz")
        XCTAssertEqual(Double(flipped[1]), 100, accuracy: 2, "DSI-1 at 50 Hz")
    }

    func testUnpluggingOneOutputLeavesTheOtherFlipping() throws {
        let h = try SlotHarness()
        h.slots.rescan()
        let (a, b) = (h.slots.slots[0], h.slots.slots[1])
        let layerA = h.addLayer(to: a.engine, color: OutputLifecycleTests.red)
        h.addLayer(to: b.engine, color: OutputLifecycleTests.blue)
        h.settle()

        h.card.unplug("DSI-1")
        h.slots.rescan()
        XCTAssertFalse(b.engine.hasOutput)
        XCTAssertTrue(a.engine.hasOutput)
        XCTAssertEqual(h.card.liveOutputs, 1, "the unplugged output was released, the other kept")
        XCTAssertEqual(h.events.last?.connector, "DSI-1")
        let flipped = a.engine.stats.framesFlipped
        layerA.content = SolidContent(color: OutputLifecycleTests.green)
        h.settle()
        XCTAssertGreaterThan(a.engine.stats.framesFlipped, flipped, "the other output keeps flipping")
        XCTAssertEqual(h.frontPixel(a, x: 5, y: 5), xrgb(OutputLifecycleTests.green))

        h.card.plug("DSI-1")
        h.slots.rescan()
        h.settle()
        XCTAssertEqual(h.frontPixel(b, x: 5, y: 5), xrgb(OutputLifecycleTests.blue), "the replugged output shows its scene")
        XCTAssertEqual(h.frontPixel(a, x: 5, y: 5), xrgb(OutputLifecycleTests.green))
        XCTAssertEqual(h.card.liveOutputs, 2)

        h.slots.stop()
        XCTAssertEqual(h.card.liveOutputs, 0, "stopping gives back both outputs")
    }

    func testAConnectorNamedTwiceIsRefused() throws {
        let (loop, _) = MainLoop.manual()
        let card = FakeCard(connected: true)
        let entry = OutputSlots.Entry(connector: "Virtual-1", source: card.connectorSource("Virtual-1"), sceneSize: Self.hdmi.size)
        XCTAssertThrowsError(try OutputSlots(loop: loop, pool: RenderQueuePool(strategy: .manual), entries: [entry, entry]) { _, mode in
            RecordingCompositor(size: mode.size)
        }) { XCTAssertEqual("\($0)", "outputs: connector Virtual-1 is named twice") }
        XCTAssertThrowsError(try OutputSlots(loop: loop, pool: RenderQueuePool(strategy: .manual), entries: []) { _, mode in
            RecordingCompositor(size: mode.size)
        }) { XCTAssertEqual("\($0)", "outputs: no output given") }
        let lower = OutputSlots.Entry(connector: "virtual-1", source: card.connectorSource("Virtual-1"), sceneSize: Self.hdmi.size)
        XCTAssertThrowsError(try OutputSlots(loop: loop, pool: RenderQueuePool(strategy: .manual), entries: [entry, lower]) { _, mode in
            RecordingCompositor(size: mode.size)
        }) { XCTAssertEqual("\($0)", "outputs: connector virtual-1 is named twice") }
        let unnamed = OutputSlots.Entry(connector: nil, source: card.connectorSource("Virtual-1"), sceneSize: Self.hdmi.size)
        XCTAssertThrowsError(try OutputSlots(loop: loop, pool: RenderQueuePool(strategy: .manual), entries: [entry, unnamed]) { _, mode in
            RecordingCompositor(size: mode.size)
        }) { XCTAssertEqual("\($0)", "outputs: an output beside others must name its connector") }
    }

    func testASoleSlotThatNamesNoConnectorGoesByTheOneItAdopted() throws {
        let (loop, _) = MainLoop.manual()
        let card = FakeCard(connected: true)
        card.unplug()
        let slots = try OutputSlots(loop: loop, pool: RenderQueuePool(strategy: .manual), entries: [
            .init(connector: nil, source: card, sceneSize: Self.hdmi.size),
        ]) { _, mode in RecordingCompositor(size: mode.size) }
        XCTAssertEqual(slots.first.name, "auto", "before any probe")
        slots.rescan()
        XCTAssertEqual(slots.first.name, "Virtual-1", "waiting: the connector its probe saw")
        card.plug()
        slots.rescan()
        XCTAssertEqual(slots.first.engine.backend?.info.connector, "Virtual-1")
        XCTAssertEqual(slots.first.name, "Virtual-1")
        XCTAssertTrue(try slots.slot(named: "VIRTUAL-1") === slots.first)
        XCTAssertThrowsError(try slots.slot(named: "HDMI-A-1")) {
            XCTAssertEqual("\($0)", "no output named 'HDMI-A-1'; outputs: Virtual-1")
        }
        slots.stop()
    }
}

/// Two slots, HDMI-A-1 (64x48 at 60 Hz) and DSI-1 (100x50 at 50 Hz), on one fake card, the manual clock and a
/// manual render pool. Main thread.
final class SlotHarness {
    let loop: MainLoop
    let poller: ManualPoller
    let pool = RenderQueuePool(strategy: .manual)
    let card: FakeCard
    let slots: OutputSlots
    private(set) var events: [OutputEvent] = []

    init() throws {
        (loop, poller) = MainLoop.manual()
        card = FakeCard(connectors: [
            FakeCard.Connector(name: "HDMI-A-1", isConnected: true, modes: [OutputSlotTests.hdmi]),
            FakeCard.Connector(name: "DSI-1", isConnected: true, modes: [OutputSlotTests.panel]),
        ])
        slots = try OutputSlots(loop: loop, pool: pool, entries: [
            .init(connector: "HDMI-A-1", source: card.connectorSource("HDMI-A-1"), sceneSize: Size(width: 10, height: 10)),
            .init(connector: "DSI-1", source: card.connectorSource("DSI-1"), sceneSize: Size(width: 10, height: 10)),
        ]) { _, mode in RecordingCompositor(size: mode.size) }
        for slot in slots.slots { slot.engine.rootLayer.backgroundColor = OutputLifecycleTests.grey }
        slots.onEvent = { [unowned self] _, event in events.append(event) }
    }

    private var isQuiet: Bool { slots.slots.allSatisfy { $0.engine.transaction.isEmpty } }

    func settleNow() {
        for _ in 0..<1000 {
            let wakeups = loop.wakeups
            loop.runOnce(timeout: .zero)
            if pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && isQuiet { return }
        }
        XCTFail("the loop never went quiet")
    }

    func settle() {
        for _ in 0..<200 {
            settleNow()
            let flipping = slots.slots.contains { $0.engine.backend?.isFlipPending == true }
            if flipping, let next = loop.nextTimerDeadline {
                poller.advance(to: max(next, loop.now))
                continue
            }
            if !slots.slots.contains(where: { $0.engine.hasPendingWork }) { return }
        }
        XCTFail("the engines never settled")
    }

    func run(for duration: Duration) {
        runManualTime(loop, poller, for: duration, settlingAtEnd: true) { settleNow() }
    }

    @discardableResult
    func addLayer(to engine: LayerEngine, color: Color) -> Layer {
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 20, height: 20), content: SolidContent(color: color), name: "solid")
        engine.rootLayer.addChild(layer)
        return layer
    }

    func frontPixel(_ slot: OutputSlots.Slot, x: Int, y: Int) -> UInt32? {
        guard let backend = slot.engine.backend, let bytes = backend.frontBufferSnapshot() else { return nil }
        let offset = (y * backend.info.mode.width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }
}

private extension OutputEvent {
    var connector: String {
        switch self {
        case .connected(let info), .modeChanged(let info): info.connector
        case .disconnected(let connector): connector
        }
    }
}
