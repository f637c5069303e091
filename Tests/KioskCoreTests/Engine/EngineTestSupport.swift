#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import KioskTestSupport
import KioskDisplay
import XCTest

/// Premultiplied ARGB32, the format of `LayerSurface`.
func premultipliedARGB(_ color: Color) -> UInt32 {
    func channel(_ value: Double) -> UInt32 { UInt32((value * color.alpha * 255).rounded()) }
    return UInt32((color.alpha * 255).rounded()) << 24 | channel(color.red) << 16 | channel(color.green) << 8 | channel(color.blue)
}

/// XRGB8888, the format of the shadow and scanout buffers.
func xrgb(_ color: Color) -> UInt32 {
    premultipliedARGB(Color(red: color.red, green: color.green, blue: color.blue)) & 0x00FF_FFFF
}

let red = Color(rgb: 0xFF0000)
let green = Color(rgb: 0x00FF00)
let blue = Color(rgb: 0x0000FF)
let yellow = Color(rgb: 0xFFFF00)
let grey = Color(rgb: 0x808080)

/// Fills the whole surface with one colour. Its draw count is shared by every copy, so a test can see how often
/// the content was actually drawn.
struct SolidContent: LayerContent {
    var color: Color
    var kind: String = "solid"
    var draws: Counter? = nil

    var isOpaque: Bool { color.alpha == 1 }

    func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        draws?.increment()
        let pixel = premultipliedARGB(color)
        for y in 0..<surface.size.height {
            for x in 0..<surface.size.width {
                surface.bytes.storeBytes(of: pixel, toByteOffset: y * surface.stride + x * 4, as: UInt32.self)
            }
        }
    }
}

/// Blocks in `draw` until its gate opens: holds a render on a real worker thread while a test changes the tree.
struct GatedContent: LayerContent {
    var color: Color
    let gate: Gate
    var kind: String { "gated" }

    func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
        gate.arrive()
        gate.waitUntilOpen()
        try SolidContent(color: color).draw(into: surface, isCancelled: isCancelled)
    }
}

/// Always fails to draw.
struct FailingContent: LayerContent {
    struct Failure: Error, CustomStringConvertible { var description: String { "font not found" } }
    var kind: String { "failing" }
    func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws { throw Failure() }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let count = Lock(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// A gate a worker waits at until the test opens it. Polls a pthread lock, which ThreadSanitizer models. A test
/// opens it on every way out (`defer { gate.open() }`), so that a test that fails early leaves no worker waiting.
final class Gate: Sendable {
    private let state = Lock((open: false, arrived: 0))
    private let file: StaticString
    private let line: UInt

    init(file: StaticString = #filePath, line: UInt = #line) {
        self.file = file
        self.line = line
    }

    func open() { state.withLock { $0.open = true } }
    func arrive() { state.withLock { $0.arrived += 1 } }
    var arrivals: Int { state.withLock { $0.arrived } }

    /// On a worker: waits until the test opens the gate, for at most `timeout` seconds. A gate still shut then
    /// fails the test where the gate was made and lets the worker go on, so a test that never opens it fails
    /// instead of hanging.
    func waitUntilOpen(timeout: Double = 20) {
        do {
            try Poll.until("the test to open the gate", timeout: timeout, interval: 0.0002) {
                state.withLock { $0.open }
            }
        } catch {
            XCTFail("a worker waited at the gate: \(error)", file: file, line: line)
        }
    }

    /// On the test thread: waits until `count` workers are waiting at the gate, for at most `timeout` seconds;
    /// throws naming the count and the arrivals seen when they do not come.
    func waitForArrivals(_ count: Int, timeout: Double = 10) throws {
        try Poll.until("\(count) worker(s) at the gate", timeout: timeout, interval: 0.0002,
                       reading: { arrivals }, satisfies: { $0 >= count })
    }
}

/// A `Compositing` that records every call and composes solid colours into an XRGB8888 shadow buffer: a colour
/// item paints its colour, a surface item the colour of its pixel (0, 0), both blended with the item's opacity.
/// Scanout buffers receive the damage accumulated since they last got a copy, as the real compositor does.
final class RecordingCompositor: Compositing {
    struct ComposeCall {
        var items: [CompositeItem]
        var damage: [Rect]
    }

    struct CopyCall {
        var bufferIndex: Int
        var rects: [Rect]
        var bytes: Int
    }

    let size: Size
    private(set) var shadow: [UInt32]
    private(set) var composeCalls: [ComposeCall] = []
    private(set) var copyCalls: [CopyCall] = []
    /// Damage each known buffer has not received yet.
    private var bufferDamage: [Int: [Rect]] = [:]
    var onCompose: ((ComposeCall) -> Void)?
    var onCopy: ((CopyCall) -> Void)?

    /// Fingerprints of the shadow buffer, kept as the shadow compositor keeps them (only touched tiles rehashed).
    private(set) var tiles: TileFingerprints
    var fingerprint: FrameFingerprint? { tiles.fingerprint }
    var tilesHashed: Int { tiles.tilesHashed }

    init(size: Size) {
        self.size = size
        shadow = Array(repeating: 0, count: size.width * size.height)
        tiles = TileFingerprints(size: size, color: 0)
    }

    func pixel(x: Int, y: Int) -> UInt32 { shadow[y * size.width + x] }

    private func paint(_ argb: UInt32, area: Rect, opacity: Double) {
        let alpha = Double(argb >> 24) / 255
        let straight = alpha > 0 ? unpremultiplied(argb, alpha: alpha) : 0
        fill(area, with: straight, alpha: alpha * opacity)
    }

    /// A content's top-left pixel when drawn at `size` (premultiplied ARGB), 0 when it cannot be drawn.
    static func firstPixel(of content: any LayerContent, size: Size) -> UInt32 {
        guard size.width > 0, size.height > 0 else { return 0 }
        let surface = LayerSurface(size: size)
        guard (try? content.draw(into: surface, isCancelled: { false })) != nil else { return 0 }
        return surface.pixel(x: 0, y: 0)
    }

    @discardableResult
    func compose(_ items: [CompositeItem], damage: [Rect]) -> [Rect] {
        let screen = Rect(size: size)
        let clipped = damage.map { $0.intersection(screen) }.filter { !$0.isEmpty }
        for rect in clipped {
            fill(rect, with: 0, alpha: 1)
            for item in items {
                let area = item.frame.intersection(rect)
                guard !area.isEmpty else { continue }
                switch item.source {
                case .color(let color):
                    fill(area, with: xrgb(color), alpha: color.alpha * item.opacity)
                case .surface(let surface):
                    paint(surface.pixel(x: 0, y: 0), area: area, opacity: item.opacity)
                case .content(let content):
                    // A plain fill, drawn at the item's size as the shadow compositor draws it; painted by its pixel (0, 0).
                    paint(Self.firstPixel(of: content, size: item.frame.size), area: area, opacity: item.opacity)
                }
            }
        }
        shadow.withUnsafeBytes { tiles.update(damage: clipped, pixels: $0.baseAddress!, stride: size.width * 4) }
        for index in bufferDamage.keys {
            bufferDamage[index]! += clipped.filter { !bufferDamage[index]!.contains($0) }
        }
        let call = ComposeCall(items: items, damage: damage)
        composeCalls.append(call)
        onCompose?(call)
        return clipped
    }

    func copy(into buffer: PixelBuffer) -> (rects: [Rect], bytes: Int) {
        let rects = bufferDamage[buffer.index] ?? [Rect(size: size)]
        bufferDamage[buffer.index] = []
        var bytes = 0
        for rect in rects {
            for y in rect.y..<rect.maxY {
                for x in rect.x..<rect.maxX {
                    buffer.base.storeBytes(of: pixel(x: x, y: y), toByteOffset: y * buffer.stride + x * 4, as: UInt32.self)
                }
            }
            bytes += rect.area * 4
        }
        let call = CopyCall(bufferIndex: buffer.index, rects: rects, bytes: bytes)
        copyCalls.append(call)
        onCopy?(call)
        return (rects, bytes)
    }

    func invalidateBuffers() {
        bufferDamage = [:]
    }

    func snapshot() -> [UInt8] {
        shadow.withUnsafeBytes { Array($0) }
    }

    private func unpremultiplied(_ argb: UInt32, alpha: Double) -> UInt32 {
        func channel(_ shift: UInt32) -> UInt32 {
            UInt32(min(255, (Double((argb >> shift) & 0xFF) / alpha).rounded())) << shift
        }
        return channel(16) | channel(8) | channel(0)
    }

    private func fill(_ rect: Rect, with color: UInt32, alpha: Double) {
        guard alpha > 0 else { return }
        for y in rect.y..<rect.maxY {
            for x in rect.x..<rect.maxX {
                let index = y * size.width + x
                if alpha >= 1 {
                    shadow[index] = color
                    continue
                }
                var mixed: UInt32 = 0
                for shift: UInt32 in [0, 8, 16] {
                    let source = Double((color >> shift) & 0xFF), destination = Double((shadow[index] >> shift) & 0xFF)
                    mixed |= UInt32((source * alpha + destination * (1 - alpha)).rounded()) << shift
                }
                shadow[index] = mixed
            }
        }
    }
}

extension RecordingCompositor.ComposeCall {
    /// The colours the items of this call paint, surface items by their pixel (0, 0).
    var itemColors: [UInt32] {
        items.map { item in
            switch item.source {
            case .color(let color): premultipliedARGB(color)
            case .surface(let surface): surface.pixel(x: 0, y: 0)
            case .content(let content): RecordingCompositor.firstPixel(of: content, size: item.frame.size)
            }
        }
    }

    /// The frames of the items painting `color`.
    func frames(painting color: Color) -> [Rect] {
        zip(items, itemColors).filter { $0.1 == premultipliedARGB(color) }.map(\.0.frame)
    }
}

/// A started engine on a manual clock, a 64x48@60 headless output and a recording compositor.
final class EngineHarness {
    static let mode = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)

    let loop: MainLoop
    let poller: ManualPoller
    let backend: HeadlessBackend
    let compositor: RecordingCompositor
    let pool: RenderQueuePool
    let engine: LayerEngine
    /// The listeners a test added to the engine, kept as long as the harness.
    var listeners: [ListenerToken] = []

    init(pool: RenderQueuePool = RenderQueuePool(strategy: .manual), bufferCount: Int = 2, start: Bool = true) throws {
        (loop, poller) = MainLoop.manual()
        backend = try HeadlessBackend(mode: Self.mode, bufferCount: bufferCount)
        compositor = RecordingCompositor(size: Self.mode.size)
        self.pool = pool
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        if start { try engine.start() }
    }

    /// Whether `settleNow` runs a `.manual` pool's queued jobs; off while a test holds jobs back.
    var runsQueuedJobs = true

    var root: Layer { engine.rootLayer }
    var stats: EngineStats { engine.stats }
    var frameDuration: Duration { Self.mode.frameDuration }

    /// One loop iteration at the current instant.
    func turn() {
        loop.runOnce(timeout: .zero)
    }

    /// Iterations at the current instant until one does nothing: no wake-up, no render left to run. A `.manual`
    /// pool's jobs run as soon as they are queued (unless `runsQueuedJobs` is off); a threaded pool is waited for.
    func settleNow(file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<1000 {
            let wakeups = loop.wakeups
            turn()
            if pool.strategy == .manual {
                if runsQueuedJobs, pool.runQueued() > 0 { continue }
            } else if pool.outstandingJobCount > 0 || engine.rendersInFlight > 0 {
                XCTAssertTrue(pool.waitUntilIdle(), "render pool did not go idle", file: file, line: line)
                continue
            }
            if loop.wakeups == wakeups && engine.transaction.isEmpty { return }
        }
        XCTFail("the loop never went quiet", file: file, line: line)
    }

    /// Runs like `MainLoop.run()` would for `duration` of manual time: quiet iterations at each instant something
    /// is due, then the clock jumps to the next timer, as epoll would sleep until it.
    func run(for duration: Duration, file: StaticString = #filePath, line: UInt = #line) {
        runManualTime(loop, poller, for: duration, settlingAtEnd: false) { settleNow(file: file, line: line) }
    }

    /// Runs until renders are applied, the frame is presented and its flip completed, with nothing left to do.
    func settle(file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<100 {
            settleNow(file: file, line: line)
            if backend.isFlipPending, let next = loop.nextTimerDeadline {
                poller.advance(to: max(next, loop.now))
                continue
            }
            if !engine.hasPendingWork { return }
        }
        XCTFail("the engine never settled", file: file, line: line)
    }

    /// Moves the clock to the pending flip's vblank and runs the iteration in which it completes.
    func completeFlip(file: StaticString = #filePath, line: UInt = #line) {
        guard backend.isFlipPending, let next = loop.nextTimerDeadline else {
            XCTFail("no flip pending", file: file, line: line)
            return
        }
        poller.advance(to: max(next, loop.now))
        turn()
    }

    /// A layer with solid content, added to the root.
    @discardableResult
    func addSolidLayer(_ name: String, frame: Rect, color: Color, async: Bool = true, to parent: Layer? = nil) -> Layer {
        let layer = Layer(frame: frame, content: SolidContent(color: color), name: name)
        layer.displaysAsynchronously = async
        (parent ?? root).addChild(layer)
        return layer
    }

    /// The XRGB pixel the front buffer shows at (x, y).
    func frontPixel(x: Int, y: Int) -> UInt32? {
        guard let bytes = backend.frontBufferSnapshot() else { return nil }
        let offset = (y * Self.mode.width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }
}
