import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime

/// Not product code: the contestants `kioskd bench` times on one scene file. Each runs on the calling (main)
/// thread; the engine's renders run on its pool.
public enum Contestants {
    /// The wall-clock time clocks show at the start of every run, so every contestant draws the same text.
    public static let clockStart = 1_700_000_000

    /// One memcpy of `bytes` per frame, `frames` times: the floor of any full redraw.
    public static func memcpyMsPerFrame(bytes: Int, frames: Int) -> Double {
        let src = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let dst = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        defer { src.deallocate(); dst.deallocate() }
        memset(src, 0x5A, bytes)
        memset(dst, 0, bytes)
        let start = CPUTime.thread()
        for i in 0..<frames {
            src.storeBytes(of: UInt8(truncatingIfNeeded: i), as: UInt8.self)
            memcpy(dst, src, bytes)
        }
        let ms = (CPUTime.thread() - start) / Double(frames)
        precondition(dst.load(as: UInt8.self) == UInt8(truncatingIfNeeded: frames - 1))
        return ms
    }

    /// One memcpy of `bytes` per frame from cold memory: frame `i` copies source `i % 4` into destination `i % 2`,
    /// six buffers of the frame's size, so a copy reads and writes what it has not touched for frames (as a
    /// compositor reads page surfaces a worker wrote and writes a scanout buffer last written two frames ago). The
    /// floor of a frame's memory traffic where the frames do not fit in the cache; `memcpyMsPerFrame` copies the
    /// same two buffers every frame.
    public static func coldMemcpyMsPerFrame(bytes: Int, frames: Int) -> Double {
        let sources = (0..<4).map { _ in UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64) }
        let destinations = (0..<2).map { _ in UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64) }
        defer { (sources + destinations).forEach { $0.deallocate() } }
        for (i, buffer) in (sources + destinations).enumerated() { memset(buffer, Int32(0x10 + i), bytes) }
        let start = CPUTime.thread()
        for i in 0..<frames {
            sources[i % 4].storeBytes(of: UInt8(truncatingIfNeeded: i), as: UInt8.self)
            memcpy(destinations[i % 2], sources[i % 4], bytes)
        }
        let ms = (CPUTime.thread() - start) / Double(frames)
        precondition(destinations[(frames - 1) % 2].load(as: UInt8.self) == UInt8(truncatingIfNeeded: frames - 1))
        return ms
    }

    /// The hand-written kiosk: the scene runs on a manual clock (its tickers, pages and clocks move one refresh per
    /// frame through the stage's clock and the display link), and each frame the naive renderer lists the layer
    /// tree and redraws all of it into one buffer. Only the listing and drawing are timed; renders are never
    /// run in the background (a manual pool), so the process CPU measured around them is the baseline's own.
    /// It has no display: flips, missed vblanks and the first frame are not measured (nil). `strategy` says how
    /// each widget is drawn: straight into the frame, or through a surface of its own.
    public static func naive(scene path: String, mode: OutputMode, frames: Int,
                             strategy: NaiveFrameRenderer.Strategy) throws -> BenchFigures {
        let (loop, _) = MainLoop.manual()
        let backend = try HeadlessBackend(mode: mode, bufferCount: 2)
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: mode.size),
                                     pool: RenderQueuePool(strategy: .manual))
        var seconds = 0.0
        let stage = try SceneStage(engine: engine, path: path, clock: { WallTime(seconds: clockStart) + .nanoseconds(Int64(seconds * 1e9)) })
        try engine.start()
        let renderer = NaiveFrameRenderer(strategy: strategy)
        let stride = mode.width * 4
        let memory = UnsafeMutableRawPointer.allocate(byteCount: stride * mode.height, alignment: 64)
        defer { memory.deallocate() }
        let buffer = PixelBuffer(index: 0, base: memory, size: mode.size, stride: stride)
        try renderer.render(items: SceneItems.list(engine.rootLayer), into: buffer)  // warm-up: fonts, image decode
        var perFrame = LatencyRecorder()
        var thread = 0.0, process = 0.0
        for _ in 0..<frames {
            seconds += mode.frameDuration.seconds
            loop.advanceTime(by: mode.frameDuration)
            loop.runOnce(timeout: .zero)
            let t0 = CPUTime.thread(), p0 = CPUTime.process()
            try renderer.render(items: SceneItems.list(engine.rootLayer), into: buffer)
            let dt = CPUTime.thread() - t0
            thread += dt
            process += CPUTime.process() - p0
            perFrame.record(.nanoseconds(Int64(dt * 1e6)))
        }
        engine.stop()
        withExtendedLifetime(stage) {}
        let n = Double(frames)
        return BenchFigures(mainCPUMsPerFrame: thread / n, totalCPUMsPerFrame: process / n,
                            bytesWrittenPerFrame: mode.width * mode.height * 4, mainMsP99: perFrame.summary.p99,
                            framesFlipped: nil, missedVblanks: nil, firstFrameMs: nil)
    }

    /// kioskd's engine on a headless output in real time: async renders on the pool, damage-only composition and
    /// copies. The warm-up ends at the first flip of a frame composed with every layer rendered (`first_frame_ms`,
    /// from the start of this run); then `frames` flips are measured.
    public static func engine(scene path: String, mode: OutputMode, frames: Int,
                              strategy: RenderQueuePool.Strategy) throws -> BenchFigures {
        try engine(scene: path, mode: mode, frames: frames, strategy: strategy, overlayPlanes: 0).figures
    }

    /// `engine` on an output with `overlayPlanes` overlay planes (`HeadlessPlaneOutput`, which copies layer frames
    /// into plane buffers on the main thread as DRM does) when above 0; also the layer frames copied into plane
    /// buffers while measuring (nil without planes), and the frames the compositor wrote straight into scanout
    /// buffers (`ShadowCompositor.directFrames`) while measuring.
    public static func engine(scene path: String, mode: OutputMode, frames: Int, strategy: RenderQueuePool.Strategy,
                              overlayPlanes: Int) throws -> (figures: BenchFigures, planeFramesCopied: Int?, directFrames: Int) {
        let loop = try MainLoop.epoll()
        let planeOutput = overlayPlanes > 0 ? try HeadlessPlaneOutput(mode: mode, planeCount: overlayPlanes) : nil
        let backend: any DisplayBackend = try planeOutput ?? HeadlessBackend(mode: mode, bufferCount: 2)
        let shadow = try ShadowCompositor(size: mode.size)
        let compositor = CountingCompositor(shadow)
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: RenderQueuePool(strategy: strategy))
        engine.overlayPlanes = planeOutput
        var startCopied = 0, startDirect = 0
        let begin = MonotonicInstant.now()
        let stage = try SceneStage(engine: engine, path: path, clock: {
            WallTime(seconds: clockStart) + (MonotonicInstant.now() - begin)
        })
        var firstFrameMs: Double?
        var completeQueued = false
        var measuring = false
        var flips = FlipStatistics()
        var perFrame = LatencyRecorder()
        var lastThread = 0.0, startThread = 0.0, startProcess = 0.0, startBytes = 0
        let presentListener = engine.addPresentListener { _ in if !engine.isRendering(engine.rootLayer) { completeQueued = true } }
        let flipListener = engine.addFlipListener { event in
            // Stopping the engine completes the flip in flight, after the last one counted: it is not measured.
            guard flips.framesFlipped < frames else { return }
            guard measuring else {
                guard completeQueued else { return }
                firstFrameMs = ((MonotonicInstant.now() - begin).milliseconds * 100).rounded() / 100
                measuring = true
                startThread = CPUTime.thread(); lastThread = startThread
                startProcess = CPUTime.process()
                startBytes = compositor.bytesCopied
                startCopied = planeOutput?.framesCopied ?? 0
                startDirect = shadow.directFrames
                return
            }
            flips.record(event)
            let now = CPUTime.thread()
            perFrame.record(.nanoseconds(Int64((now - lastThread) * 1e6)))
            lastThread = now
            if flips.framesFlipped >= frames { loop.stop() }
        }
        // Still frames are presented too, so every frame is a flip even where nothing moves.
        let ticking = Ticking()
        engine.addAnimation(target: ticking) { _, _ in true }
        try engine.start()
        let watchdog = loop.addTimer(after: .seconds(Int64(frames / 10 + 60))) { loop.stop() }
        loop.run()
        watchdog.cancel()
        let endThread = CPUTime.thread(), endProcess = CPUTime.process()
        let direct = shadow.directFrames - startDirect
        engine.stop()
        withExtendedLifetime((stage, ticking, presentListener, flipListener)) {}
        guard flips.framesFlipped >= frames else {
            throw BenchError("bench \(path): the engine flipped \(flips.framesFlipped) of \(frames) frames before the time limit")
        }
        let n = Double(flips.framesFlipped)
        let copied = planeOutput.map { $0.framesCopied - startCopied }
        return (BenchFigures(
            mainCPUMsPerFrame: (endThread - startThread) / n, totalCPUMsPerFrame: (endProcess - startProcess) / n,
            bytesWrittenPerFrame: (compositor.bytesCopied - startBytes) / flips.framesFlipped,
            mainMsP99: perFrame.summary.p99, framesFlipped: flips.framesFlipped,
            missedVblanks: Int(flips.missedVblanks), firstFrameMs: firstFrameMs), copied, direct)
    }
}

/// The display link's target that keeps frames coming during a measurement. Main thread.
final class Ticking {}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Counts the bytes a compositor writes into scanout buffers. Main thread.
final class CountingCompositor: Compositing {
    private let inner: any Compositing
    private(set) var bytesCopied = 0
    init(_ inner: any Compositing) { self.inner = inner }
    var size: Size { inner.size }
    var sceneSize: Size { inner.sceneSize }
    var rotation: OutputRotation { inner.rotation }
    func compose(_ items: [CompositeItem], damage: [Rect]) -> [Rect] { inner.compose(items, damage: damage) }
    func copy(into buffer: PixelBuffer) -> (rects: [Rect], bytes: Int) {
        let r = inner.copy(into: buffer)
        bytesCopied += r.bytes
        return r
    }
    func invalidateBuffers() { inner.invalidateBuffers() }
    func snapshot() -> [UInt8] { inner.snapshot() }
}
