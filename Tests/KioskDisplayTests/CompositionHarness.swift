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
    static let mode = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)

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

/// The pixels of `rect`, as `CompositionHarness.frontPixels` lists those of a colour.
func pixels(in rect: Rect) -> Set<[Int]> {
    var set: Set<[Int]> = []
    for y in rect.y..<rect.maxY { for x in rect.x..<rect.maxX { set.insert([x, y]) } }
    return set
}

/// Premultiplied ARGB colours for `HalvesContent`.
let red: UInt32 = 0xFFFF_0000, blue: UInt32 = 0xFF00_00FF, green: UInt32 = 0xFF00_FF00

extension Rect {
    /// Moves the rectangle to (`x`, `y`), its size kept.
    mutating func origin(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}
