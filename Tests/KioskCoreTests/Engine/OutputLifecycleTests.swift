import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// Outputs that come and go, on a fake card and the manual clock: kioskd started with nothing connected, a display
/// adopted, unplugged and plugged in again (with another preferred mode too), and a thousand plug cycles with
/// renders and flips in flight that must give back every output, framebuffer, buffer and layer surface.
final class OutputLifecycleTests: XCTestCase {
    static let small = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)
    static let wide = OutputMode(width: 100, height: 50, refreshMilliHz: 50_000)
    static let grey = Color(red: 0.5, green: 0.5, blue: 0.5)
    static let red = Color(red: 1, green: 0, blue: 0)
    static let green = Color(red: 0, green: 1, blue: 0)
    static let blue = Color(red: 0, green: 0, blue: 1)

    func testWithNothingConnectedRendersLandButNothingIsComposedAndNoTimerIsArmed() throws {
        let h = try OutputHarness(connected: false)
        let layer = h.addLayer(color: OutputLifecycleTests.red)
        h.settleNow()
        XCTAssertTrue(h.manager.isWaiting)
        XCTAssertFalse(h.engine.hasOutput)
        XCTAssertNotNil(layer.renderedSurface, "renders land while no display is connected")
        XCTAssertEqual(h.compositorsMade, 0)
        XCTAssertEqual(h.engine.stats.framesComposed, 0)
        XCTAssertNil(h.loop.nextTimerDeadline, "waiting arms no timer")
        XCTAssertFalse(h.engine.hasPendingWork)
        let wakeups = h.loop.wakeups
        for _ in 0..<5 { h.turn() }
        XCTAssertEqual(h.loop.wakeups, wakeups, "no wake-ups while waiting")
        XCTAssertEqual(h.events, [])
        XCTAssertThrowsError(try h.engine.setOutputPower(false)) { XCTAssertTrue($0 is NoOutputError) }
        var captured: [UInt8]?? = .none
        h.engine.captureScreen { captured = $0 }
        XCTAssertEqual(captured, .some(nil), "a screenshot without a display is answered at once, with nothing")
    }

    func testTheFirstDisplayIsAdoptedLaidOutForItsModeAndShownInFull() throws {
        let h = try OutputHarness(connected: false)
        h.addLayer(color: OutputLifecycleTests.red)
        h.settleNow()
        h.card.plug(modes: [Self.wide])
        h.manager.rescan()
        h.settle()
        let info = try XCTUnwrap(h.engine.backend?.info)
        XCTAssertEqual(h.events, [.connected(info)])
        XCTAssertEqual(info.mode, h.card.connectors[0].modes[0])
        XCTAssertEqual(h.sizeChanges, [Self.wide.size])
        XCTAssertEqual(h.engine.rootLayer.frame.size, Self.wide.size)
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(OutputLifecycleTests.red))
        XCTAssertEqual(h.frontPixel(x: 99, y: 49), xrgb(Self.grey), "the whole screen was drawn, outside the layer too")
        XCTAssertGreaterThan(h.engine.stats.framesFlipped, 0)
    }

    func testUnplugStopsPresentingKeepsTheTreeAndAReplugShowsItAgain() throws {
        let h = try OutputHarness(connected: true)
        let layer = h.addLayer(color: OutputLifecycleTests.red)
        h.settle()
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(OutputLifecycleTests.red))
        let first = try XCTUnwrap(h.engine.backend?.info)

        h.card.unplug()
        h.manager.rescan()
        XCTAssertEqual(h.events, [.disconnected(connector: "Virtual-1")])
        XCTAssertFalse(h.engine.hasOutput)
        XCTAssertEqual(h.card.stopped, 1)
        XCTAssertEqual(h.card.liveOutputs, 0, "the unplugged output was released")
        XCTAssertEqual(h.compositorsAlive, 0)
        let presents = h.card.presents
        layer.content = SolidContent(color: OutputLifecycleTests.blue)
        h.settleNow()
        XCTAssertEqual(h.card.presents, presents, "nothing is presented while unplugged")
        XCTAssertNil(h.loop.nextTimerDeadline)

        h.card.plug()
        h.manager.rescan()
        h.settle()
        XCTAssertEqual(h.events, [.disconnected(connector: "Virtual-1"), .connected(first)])
        XCTAssertEqual(h.sizeChanges, [], "the same mode: no new layout")
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(OutputLifecycleTests.blue), "the change made while unplugged is shown")
        XCTAssertEqual(h.card.liveOutputs, 1)
    }

    func testAReplugWithAnotherPreferredModeGetsALayoutForIt() throws {
        let h = try OutputHarness(connected: true)
        h.addLayer(color: OutputLifecycleTests.red)
        h.settle()
        h.card.unplug()
        h.manager.rescan()
        h.card.plug(modes: [Self.wide, Self.small])
        h.manager.rescan()
        h.settle()
        XCTAssertEqual(h.engine.backend?.info.mode.size, Self.wide.size, "the new display's preferred mode")
        XCTAssertEqual(h.sizeChanges, [Self.wide.size])
        XCTAssertEqual(h.engine.rootLayer.frame.size, Self.wide.size)
        XCTAssertEqual(h.frontPixel(x: 99, y: 49), xrgb(Self.grey))

        // The same connector offering another preferred mode without an unplug in between: a `mode` change.
        h.card.plug(modes: [Self.small])
        h.manager.rescan()
        h.settle()
        let info = try XCTUnwrap(h.engine.backend?.info)
        XCTAssertEqual(h.events.last, .modeChanged(info))
        XCTAssertEqual(h.sizeChanges, [Self.wide.size, Self.small.size])
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(OutputLifecycleTests.red))
        XCTAssertEqual(h.card.liveOutputs, 1)
    }

    func testTheRequestedModeIsKeptWhenTheNewDisplayHasItElseItsPreferredOne() throws {
        let h = try OutputHarness(connected: true)
        h.card.requestedMode = ModeRequest(width: 64, height: 48)
        h.manager.rescan()
        h.card.plug(modes: [Self.wide, Self.small])
        h.manager.rescan()
        XCTAssertEqual(h.engine.backend?.info.mode.size, Self.small.size, "the board file's mode, which this display has")
        h.card.plug(modes: [Self.wide])
        h.manager.rescan()
        XCTAssertEqual(h.engine.backend?.info.mode.size, Self.wide.size, "this display lacks it: its preferred mode")
    }

    func testAProbeThatFailsKeepsTheOutputAndTheNextOneWorks() throws {
        let h = try OutputHarness(connected: true)
        h.settle()
        h.card.probeFailure = OutputError("device /dev/dri/card-fake: drmModeGetResources failed: EIO", errno: EIO)
        h.manager.rescan()
        XCTAssertTrue(h.engine.hasOutput)
        XCTAssertEqual(h.events, [])
        h.card.unplug()
        h.manager.rescan()
        XCTAssertFalse(h.engine.hasOutput)
    }

    func testAThousandPlugCyclesWithRendersAndFlipsInFlightLeakNothing() throws {
        let h = try OutputHarness(connected: true)
        let tracker = SurfaceTracker()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 20, height: 20), content: TrackedContent(color: OutputLifecycleTests.red, tracker: tracker), name: "tracked")
        h.engine.rootLayer.addChild(layer)
        h.settle()
        let colors: [Color] = [Self.red, Self.green, Self.blue, .white]
        for cycle in 0..<1000 {
            let color = colors[cycle % colors.count]
            layer.content = TrackedContent(color: color, tracker: tracker)
            h.runsQueuedJobs = false
            h.turn()  // the render is dispatched and stays queued: in flight across the unplug
            XCTAssertEqual(h.engine.rendersInFlight, 1, "cycle \(cycle)")
            if cycle % 2 == 1 {
                // A present with its flip pending when the display goes.
                _ = h.pool.runQueued()
                h.turn()
                XCTAssertEqual(h.engine.backend?.isFlipPending, true, "cycle \(cycle)")
            }
            h.card.unplug()
            h.manager.rescan()
            h.runsQueuedJobs = true
            h.settleNow()
            // Alternate displays so that half the cycles lay the tree out for another size.
            h.card.plug(modes: [cycle % 4 < 2 ? Self.small : Self.wide])
            h.manager.rescan()
            h.settle()
            XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(color), "cycle \(cycle)")
        }
        XCTAssertEqual(h.card.opened, 1001)
        XCTAssertEqual(h.card.stopped, 1000)
        XCTAssertEqual(h.card.liveOutputs, 1, "every unplugged output was freed")
        XCTAssertEqual(h.card.liveFramebuffers, 2, "the attached output's two framebuffers, no more")
        XCTAssertEqual(h.card.buffersOut, 0, "every buffer handed out was presented or given back")
        XCTAssertEqual(h.compositorsAlive, 1)
        XCTAssertEqual(h.engine.rendersInFlight, 0)
        XCTAssertLessThanOrEqual(tracker.alive, 2, "layer surfaces: the one shown, and at most one held")
        XCTAssertEqual(h.events.count, 2000)
    }
}

extension OutputLifecycleTests {
    /// A display whose open finds DRM master held by another process (plugged in while a compositor still runs,
    /// or an `outputs:` slot opened while another process holds the card) is opened again on a short timer, with
    /// no hotplug needed, and taken as soon as it is free; the timer is the only wake-up while it waits.
    func testABusyDisplayIsOpenedAgainOnATimerAndTakenWhenFree() throws {
        let h = try OutputHarness(connected: false)
        h.addLayer(color: OutputLifecycleTests.red)
        h.settleNow()
        h.card.busyOpens = 5
        h.card.plug()
        h.manager.rescan()
        XCTAssertEqual(h.card.busyRefusals, 1)
        XCTAssertTrue(h.manager.isWaiting)
        XCTAssertEqual(h.events, [], "nothing is connected while busy")
        let start = h.loop.now
        var deadlines: [MonotonicInstant] = []
        while h.manager.isWaiting {
            let next = try XCTUnwrap(h.loop.nextTimerDeadline, "a retry is armed while the display is busy")
            deadlines.append(next)
            XCTAssertLessThan(deadlines.count, 10, "taken once free")
            h.poller.advance(to: next)
            h.settleNow()
        }
        XCTAssertEqual(h.card.busyRefusals, 5)
        XCTAssertEqual(deadlines.count, 5, "one attempt per interval: four more refusals, then the open that works")
        XCTAssertEqual(deadlines.first.map { $0 - start }, OutputManager.busyRetryInterval)
        h.settle()
        let info = try XCTUnwrap(h.engine.backend?.info)
        XCTAssertEqual(h.events, [.connected(info)])
        XCTAssertEqual(h.frontPixel(x: 5, y: 5), xrgb(OutputLifecycleTests.red), "the scene is shown once it is free")
        XCTAssertNil(h.loop.nextTimerDeadline, "no retry is left armed")
    }

    /// A busy display unplugged before it is free: the next rescan stops the retries.
    func testABusyDisplayUnpluggedStopsTheRetries() throws {
        let h = try OutputHarness(connected: false)
        h.card.busyOpens = 1000
        h.card.plug()
        h.manager.rescan()
        XCTAssertNotNil(h.loop.nextTimerDeadline)
        h.card.unplug()
        h.manager.rescan()
        XCTAssertNil(h.loop.nextTimerDeadline, "nothing to retry with nothing connected")
        XCTAssertEqual(h.card.busyRefusals, 1)
    }
}

/// A started engine with no output of its own, an `OutputManager` over a `FakeCard`, recording compositors and the
/// manual clock. Main thread.
final class OutputHarness {
    let loop: MainLoop
    let poller: ManualPoller
    let pool = RenderQueuePool(strategy: .manual)
    let engine: LayerEngine
    let card: FakeCard
    let manager: OutputManager
    private(set) var events: [OutputEvent] = []
    private(set) var sizeChanges: [Size] = []
    private var sizeListener: ListenerToken?
    private let made = CompositorCount()
    var runsQueuedJobs = true

    init(connected: Bool) throws {
        (loop, poller) = MainLoop.manual()
        card = FakeCard(connected: connected, modes: [OutputLifecycleTests.small])
        engine = try LayerEngine(loop: loop, sceneSize: OutputLifecycleTests.small.size, pool: pool)
        // Not black, so a test sees that the whole screen was drawn: fresh buffers are black.
        engine.rootLayer.backgroundColor = OutputLifecycleTests.grey
        try engine.start()
        manager = OutputManager(engine: engine, source: card, attached: nil) { [made] mode in made.make(size: mode.size) }
        manager.rescan()
        manager.onEvent = { [unowned self] in events.append($0) }
        sizeListener = engine.addSceneSizeListener { [unowned self] in sizeChanges.append($0) }
    }

    var compositorsMade: Int { made.count }
    var compositorsAlive: Int { made.alive }

    func turn() { loop.runOnce(timeout: .zero) }

    func settleNow() {
        for _ in 0..<1000 {
            let wakeups = loop.wakeups
            turn()
            if runsQueuedJobs, pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && engine.transaction.isEmpty { return }
        }
        XCTFail("the loop never went quiet")
    }

    func settle() {
        for _ in 0..<100 {
            settleNow()
            if engine.backend?.isFlipPending == true, let next = loop.nextTimerDeadline {
                poller.advance(to: max(next, loop.now))
                continue
            }
            if !engine.hasPendingWork { return }
        }
        XCTFail("the engine never settled")
    }

    @discardableResult
    func addLayer(color: Color) -> Layer {
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 20, height: 20), content: SolidContent(color: color), name: "solid")
        engine.rootLayer.addChild(layer)
        return layer
    }

    func frontPixel(x: Int, y: Int) -> UInt32? {
        guard let backend = engine.backend, let bytes = backend.frontBufferSnapshot() else { return nil }
        let offset = (y * backend.info.mode.width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }
}

/// Makes the recording compositors outputs get, and keeps them weakly to count those still alive. Main thread.
final class CompositorCount {
    private struct Weak { weak var value: RecordingCompositor? }
    private var made: [Weak] = []
    var count: Int { made.count }
    var alive: Int { made.filter { $0.value != nil }.count }

    func make(size: Size) -> RecordingCompositor {
        let compositor = RecordingCompositor(size: size)
        made.append(Weak(value: compositor))
        return compositor
    }
}

/// Every layer surface a `TrackedContent` drew into, held weakly: those still alive are the ones something keeps.
final class SurfaceTracker: Sendable {
    private final class WeakSurface: @unchecked Sendable {
        weak var surface: LayerSurface?
        init(_ surface: LayerSurface) { self.surface = surface }
    }

    private let surfaces = Lock<[WeakSurface]>([])

    func drew(into surface: LayerSurface) { surfaces.withLock { $0.append(WeakSurface(surface)) } }
    var alive: Int { surfaces.withLock { list in list.filter { $0.surface != nil }.count } }
}

/// Solid content that tells its tracker about each surface it fills.
struct TrackedContent: LayerContent {
    var color: Color
    let tracker: SurfaceTracker
    var kind: String { "tracked" }

    func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        tracker.drew(into: surface)
        try SolidContent(color: color).draw(into: surface, isCancelled: isCancelled)
    }
}
