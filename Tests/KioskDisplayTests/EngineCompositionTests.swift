import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

/// Fills the layer with one colour, or with `left` on its left half and `right` on its right half.
struct HalvesContent: LayerContent {
    var left: UInt32
    var right: UInt32
    var kind: String { "halves" }
    var isOpaque: Bool { left >> 24 == 0xFF && right >> 24 == 0xFF }

    init(_ color: UInt32) { left = color; right = color }
    init(left: UInt32, right: UInt32) { self.left = left; self.right = right }

    func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        for y in 0..<surface.size.height {
            for x in 0..<surface.size.width {
                let pixel = x < surface.size.width / 2 ? left : right
                surface.bytes.storeBytes(of: pixel, toByteOffset: y * surface.stride + x * 4, as: UInt32.self)
            }
        }
    }
}

/// The layer engine with the real compositor on the headless backend and a manual clock: what reaches the front
/// buffer, and what each present says it changed.
final class CompositionHarness {
    static let mode = DisplayMode(width: 64, height: 48, refreshMilliHz: 60_000)

    let loop: MainLoop
    let poller: ManualPoller
    let backend: HeadlessBackend
    let compositor: ShadowCompositor
    let pool = RenderQueuePool(strategy: .manual)
    let engine: LayerEngine
    /// The damage of every newly composed frame presented, in panel coordinates.
    var presented: [[Rect]] = []
    private var presentListener: ListenerToken?

    init(rotation: OutputRotation = .degrees0) throws {
        (loop, poller) = MainLoop.manual(startingAt: MonotonicInstant(nanoseconds: 1_000_000_000))
        backend = try HeadlessBackend(mode: Self.mode)
        compositor = try ShadowCompositor(size: Self.mode.size, rotation: rotation)
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        presentListener = engine.addPresentListener { [unowned self] damage in presented.append(damage) }
        try engine.start()
    }

    var panel: Size { Self.mode.size }

    /// Iterations at the current instant, running render jobs as they come, until one does nothing (no wake-up).
    func settleNow(file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<1000 {
            let wakeups = loop.wakeups
            loop.runOnce(timeout: .zero)
            if pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && engine.transaction.isEmpty { return }
        }
        XCTFail("the loop never went quiet", file: file, line: line)
    }

    /// Runs until renders are applied, the frame is presented and its flip completed, with nothing left to do.
    func settle(file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<200 {
            settleNow(file: file, line: line)
            if backend.isFlipPending, let next = loop.nextTimerDeadline {
                poller.advance(to: max(next, loop.now))
                continue
            }
            if !engine.hasPendingWork { return }
        }
        XCTFail("the engine never settled: \(engine.stats)", file: file, line: line)
    }

    /// Runs `frames` refresh periods of manual time as `MainLoop.run()` would: quiet iterations at each instant
    /// something is due, the clock jumping from timer to timer.
    func run(frames: Int, file: StaticString = #filePath, line: UInt = #line) {
        runManualTime(loop, poller, for: .nanoseconds(Int64(frames) * Self.mode.frameDuration.nanosecondsClamped),
                      settlingAtEnd: true) { settleNow(file: file, line: line) }
    }

    @discardableResult
    func addLayer(_ name: String, frame: Rect, _ content: HalvesContent, to parent: Layer? = nil) -> Layer {
        let layer = Layer(frame: frame, content: content, name: name)
        (parent ?? engine.rootLayer).addChild(layer)
        return layer
    }

    /// The XRGB word the front buffer shows at panel pixel (x, y).
    func front(_ x: Int, _ y: Int) -> UInt32 {
        guard let bytes = backend.frontBufferSnapshot() else { return 0xDEAD_BEEF }
        let offset = (y * panel.width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } & 0xFF_FFFF
    }

    /// Panel pixels of the front buffer whose colour is `xrgb`.
    func frontPixels(_ xrgb: UInt32) -> Set<[Int]> {
        var found: Set<[Int]> = []
        for y in 0..<panel.height { for x in 0..<panel.width where front(x, y) == xrgb { found.insert([x, y]) } }
        return found
    }
}

private func pixels(in rect: Rect) -> Set<[Int]> {
    var set: Set<[Int]> = []
    for y in rect.y..<rect.maxY { for x in rect.x..<rect.maxX { set.insert([x, y]) } }
    return set
}

private func covers(_ rects: [Rect], _ rect: Rect) -> Bool {
    pixels(in: rect).isSubset(of: rects.reduce(into: Set<[Int]>()) { $0.formUnion(pixels(in: $1)) })
}

private let red: UInt32 = 0xFFFF_0000, blue: UInt32 = 0xFF00_00FF, green: UInt32 = 0xFF00_FF00

final class EngineOutputRotationTests: XCTestCase {
    /// At 90° the tree is laid out portrait; a layer at the scene's top-left lands at the panel's top-right, and
    /// moving it damages and copies exactly the turned rectangles.
    func testPortraitSceneOnALandscapePanel() throws {
        let h = try CompositionHarness(rotation: .degrees90)
        XCTAssertEqual(h.engine.rootLayer.frame, Rect(x: 0, y: 0, width: 48, height: 64), "the root is the scene, portrait")
        let layer = h.addLayer("corner", frame: Rect(x: 0, y: 0, width: 8, height: 6), HalvesContent(red))
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 58, y: 0, width: 6, height: 8)))

        h.presented = []
        layer.frame.origin(x: 20, y: 30)
        h.settle()
        let scene = h.compositor.sceneSize
        let old = OutputRotation.degrees90.panelRect(Rect(x: 0, y: 0, width: 8, height: 6), sceneSize: scene)
        let new = OutputRotation.degrees90.panelRect(Rect(x: 20, y: 30, width: 8, height: 6), sceneSize: scene)
        XCTAssertEqual(new, Rect(x: 28, y: 20, width: 6, height: 8))
        XCTAssertEqual(h.presented.count, 1)
        XCTAssertEqual(Set(h.presented.first ?? []), [old, new], "the present names the turned rectangles")
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: new))
    }
}

final class EngineLayerRotationTests: XCTestCase {
    /// A 20x10 layer, left half red and right half blue, turned a quarter clockwise about its centre (20, 15):
    /// red on top, blue below, within the turned 10x20 box; the damage covers the old and the new bounding boxes.
    func testQuarterTurnAboutTheCentre() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("turned", frame: Rect(x: 10, y: 10, width: 20, height: 10), HalvesContent(left: red, right: blue))
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 10, y: 10, width: 10, height: 10)))

        h.presented = []
        layer.transform = LayerTransform(rotation: .pi / 2)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 15, y: 5, width: 10, height: 10)))
        XCTAssertEqual(h.frontPixels(0x0000FF), pixels(in: Rect(x: 15, y: 15, width: 10, height: 10)))
        let damage = h.presented.flatMap { $0 }
        XCTAssertTrue(covers(damage, Rect(x: 10, y: 10, width: 20, height: 10)), "old bounding box damaged: \(damage)")
        XCTAssertTrue(covers(damage, Rect(x: 15, y: 5, width: 10, height: 20)), "new bounding box damaged: \(damage)")
        XCTAssertEqual(h.front(12, 12), 0, "the uncovered corner of the old frame was repainted with the background")
    }

    /// A rotation inherited from the parent turns the child about the parent's centre, and an eighth of a turn
    /// paints inside the bounding box without hiding what is below.
    func testRotationsCompose() throws {
        let h = try CompositionHarness()
        h.addLayer("ground", frame: Rect(x: 0, y: 0, width: 64, height: 48), HalvesContent(green))
        let parent = Layer(frame: Rect(x: 12, y: 4, width: 40, height: 40), name: "parent")
        h.engine.rootLayer.addChild(parent)
        // The child sits in the parent's top-left quarter; turning the parent by half puts it bottom-right.
        let child = h.addLayer("child", frame: Rect(x: 0, y: 0, width: 20, height: 20), HalvesContent(red), to: parent)
        parent.transform = LayerTransform(rotation: .pi)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 32, y: 24, width: 20, height: 20)))

        // Centred in the parent and turned an eighth: a diamond about (32, 24) reaching 14.1 pixels each way.
        child.frame = Rect(x: 10, y: 10, width: 20, height: 20)
        parent.transform = LayerTransform(rotation: .pi / 4)
        h.settle()
        let reds = h.frontPixels(0xFF0000)
        XCTAssertGreaterThan(reds.count, 250, "the inside of a turned 20x20 square")
        XCTAssertLessThanOrEqual(reds.count, 400, "edge pixels are blended, not all red")
        XCTAssertTrue(reds.contains([32, 24]) && reds.contains([32, 12]) && reds.contains([20, 24]))
        XCTAssertEqual(h.front(19, 11), 0x00FF00, "the corner of the bounding box shows the ground below")
        XCTAssertEqual(h.front(44, 36), 0x00FF00)
    }
}

final class EngineClipTests: XCTestCase {
    /// A ticker strip inside a narrower band that clips: moved half out of the band, it shows only inside it, and
    /// the damage stays inside the band.
    func testChildMovedHalfOutsideAClippingParentShowsOnlyInsideIt() throws {
        let h = try CompositionHarness()
        let band = Rect(x: 8, y: 16, width: 40, height: 12)
        let parent = h.addLayer("band", frame: band, HalvesContent(0xFF20_2020))
        parent.clipsToBounds = true
        let strip = h.addLayer("ticker", frame: Rect(x: 4, y: 2, width: 24, height: 8), HalvesContent(red), to: parent)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 12, y: 18, width: 24, height: 8)))

        h.presented = []
        strip.frame.origin(x: 28, y: 2)  // screen x 36..<60; the band ends at 48
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 36, y: 18, width: 12, height: 8)))
        XCTAssertEqual(h.front(50, 20), 0, "outside the band the root's black shows")
        for rect in h.presented.flatMap({ $0 }) {
            XCTAssertEqual(rect.intersection(band), rect, "damage \(rect) leaves the band")
        }

        strip.frame.origin(x: -12, y: 8)  // half off the band's left and bottom
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 8, y: 24, width: 12, height: 4)))

        parent.clipsToBounds = false
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 0, y: 24, width: 20, height: 8)),
                       "without clipping the whole strip shows (up to the screen's edge)")
    }

    /// Clips of nested clipping ancestors intersect.
    func testNestedClipsIntersect() throws {
        let h = try CompositionHarness()
        let outer = Layer(frame: Rect(x: 0, y: 0, width: 30, height: 48), name: "outer")
        outer.clipsToBounds = true
        h.engine.rootLayer.addChild(outer)
        let inner = Layer(frame: Rect(x: 10, y: 10, width: 40, height: 10), name: "inner")
        inner.clipsToBounds = true
        outer.addChild(inner)
        h.addLayer("fill", frame: Rect(x: -20, y: -20, width: 100, height: 100), HalvesContent(red), to: inner)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 10, y: 10, width: 20, height: 10)))
    }
}

extension Rect {
    fileprivate mutating func origin(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

final class EngineDisplayPowerTests: XCTestCase {
    /// Off: over many vblanks nothing is presented or flipped and animations get no ticks, while layers keep
    /// changing and compositions go on. On: one full-screen copy shows the latest state, flips and ticks resume.
    func testPowerOffStopsPresentsAndPowerOnShowsTheLatestState() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("box", frame: Rect(x: 4, y: 4, width: 8, height: 8), HalvesContent(red))
        final class Ticks { var count = 0 }
        let ticks = Ticks()
        h.engine.addAnimation(target: ticks) { ticks, _ in ticks.count += 1; return true }
        h.run(frames: 5)
        XCTAssertGreaterThan(ticks.count, 0, "the animation ticks while the output is lit")
        XCTAssertTrue(h.engine.isDisplayPoweredOn)

        try h.engine.setDisplayPower(false)
        XCTAssertFalse(h.engine.isDisplayPoweredOn)
        XCTAssertFalse(h.backend.isPoweredOn)
        XCTAssertFalse(h.backend.isFlipPending, "the flip pending at power-off completed")
        // The next iteration ticks for that last flip; none come after it.
        h.loop.runOnce(timeout: .zero)
        let before = (stats: h.engine.stats, flips: h.backend.flipsCompleted, presents: h.backend.presentCount, ticks: ticks.count)
        for step in 1...6 {
            layer.frame = Rect(x: 4 + step * 6, y: 20, width: 8, height: 8)
            layer.content = HalvesContent(step.isMultiple(of: 2) ? blue : green)
            h.run(frames: 3)
        }
        let off = h.engine.stats
        XCTAssertEqual(h.backend.flipsCompleted, before.flips, "no flips while off")
        XCTAssertEqual(h.backend.presentCount, before.presents, "no presents while off")
        XCTAssertEqual(off.framesPresented, before.stats.framesPresented, "no frame counts as presented")
        XCTAssertEqual(off.framesFlipped, before.stats.framesFlipped)
        XCTAssertEqual(ticks.count, before.ticks, "animations freeze: the display link gets no ticks")
        XCTAssertGreaterThan(off.framesComposed, before.stats.framesComposed, "compositions go on while off")
        XCTAssertEqual(h.front(6, 6), 0xFF0000, "the screen still holds the frame from before power-off")

        try h.engine.setDisplayPower(false)
        h.run(frames: 2)
        XCTAssertEqual(h.engine.stats.framesComposed, off.framesComposed, "switching off twice does nothing")

        h.presented = []
        try h.engine.setDisplayPower(true)
        h.run(frames: 3)
        XCTAssertTrue(h.backend.isPoweredOn)
        XCTAssertEqual(h.presented, [[Rect(size: h.panel)]], "one newly composed frame, copied whole")
        XCTAssertEqual(h.frontPixels(0x0000FF), pixels(in: Rect(x: 40, y: 20, width: 8, height: 8)), "the latest state")
        XCTAssertEqual(h.front(6, 6), 0, "the old position was cleared")
        XCTAssertGreaterThan(ticks.count, before.ticks, "ticks resume")
        XCTAssertGreaterThan(h.backend.flipsCompleted, before.flips + 1, "flips resume")

        let composed = h.engine.stats.framesComposed
        try h.engine.setDisplayPower(true)
        h.run(frames: 2)
        XCTAssertEqual(h.engine.stats.framesComposed, composed, "switching on twice does not redraw")
        XCTAssertEqual(h.engine.stats.framesPresented, h.backend.presentCount, "every present was counted, none while off")
    }

    /// With nothing animating, a composition made while the output is off is not work under way: the engine goes
    /// quiet instead of waiting for a present that cannot happen.
    func testNothingIsPendingWhileOff() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("box", frame: Rect(x: 4, y: 4, width: 8, height: 8), HalvesContent(red))
        h.settle()
        try h.engine.setDisplayPower(false)
        layer.frame = Rect(x: 20, y: 20, width: 8, height: 8)
        h.settle()
        XCTAssertFalse(h.engine.hasPendingWork)
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 4, y: 4, width: 8, height: 8)))
        try h.engine.setDisplayPower(true)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 20, y: 20, width: 8, height: 8)))
    }

    /// The headless backend on its own: power-off completes the pending flip, refuses presents and stops the
    /// simulated vblank; power-on accepts presents again, with the vblank counter run on by the clock.
    func testHeadlessBackendPower() throws {
        let (loop, poller) = MainLoop.manual(startingAt: MonotonicInstant(nanoseconds: 1_000_000_000))
        let backend = try HeadlessBackend(mode: CompositionHarness.mode)
        var events: [FlipEvent] = []
        try backend.start(on: loop) { events.append($0) }
        try backend.present(XCTUnwrap(backend.acquireBuffer()), damage: nil)
        try backend.setPower(false)
        XCTAssertEqual(events.count, 1, "the pending flip completed at power-off")
        XCTAssertFalse(backend.isFlipPending)
        let buffer = try XCTUnwrap(backend.acquireBuffer())
        XCTAssertThrowsError(try backend.present(buffer, damage: nil)) { error in
            XCTAssertEqual("\(error)", "Headless-1: present while the output is off")
        }
        poller.advance(by: .seconds(1))
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(events.count, 1)
        try backend.setPower(false)
        try backend.setPower(true)
        try backend.present(buffer, damage: nil)
        _ = loop.advanceTime(by: .milliseconds(20))
        XCTAssertEqual(events.count, 2)
        XCTAssertGreaterThan(events[1].sequence, events[0].sequence + 50, "a second of vblanks passed while dark")
    }
}

final class EngineScreenshotTests: XCTestCase {
    /// The screenshot is the front buffer: after the last presented frame has flipped it equals the compositor's
    /// composition of that frame, at every rotation (in panel coordinates).
    func testScreenshotEqualsTheCompositionOfTheLastPresentedFrame() throws {
        for rotation in OutputRotation.allCases {
            let h = try CompositionHarness(rotation: rotation)
            h.addLayer("a", frame: Rect(x: 2, y: 3, width: 20, height: 10), HalvesContent(left: red, right: blue))
            let b = h.addLayer("b", frame: Rect(x: 30, y: 20, width: 9, height: 17), HalvesContent(green))
            b.transform = LayerTransform(rotation: 0.3)
            h.settle()
            let shot = try XCTUnwrap(h.engine.screenshot())
            XCTAssertEqual(shot.count, h.panel.width * h.panel.height * 4)
            let composed = h.compositor.snapshot()
            let diff = compareImages(shot, composed, size: h.panel, strideA: h.panel.width * 4, strideB: h.panel.width * 4, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "\(rotation)°: \(diff)")
            XCTAssertGreaterThan(h.frontPixels(0xFF0000).count, 90, "\(rotation)°: the frame is not empty")
        }
    }
}
