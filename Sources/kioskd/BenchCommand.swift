import ArgumentParser
import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime

/// `kioskd bench`: a scene (the default dashboard scene unless told otherwise) measured three ways in one run — kioskd's engine (async renders,
/// damage-only composition and copies), a naive baseline that redraws the whole scene single-threaded with Cairo
/// into the back buffer every frame, and one memcpy of a full frame (the physical floor of any full redraw).
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the engine against a naive full redraw and a full-frame memcpy on a scene (headless).")

    @Option(help: ArgumentHelp("What to measure: default (the bundled dashboard scene), reference (the built-in reference dashboard) or a scene file.", valueName: "FILE|default|reference"))
    var scene: SceneChoice = .default

    @Option(help: "Frames measured per contestant (after a warm-up frame).")
    var frames = 600

    @Option(help: "Output size and refresh, WxH[@Hz].")
    var mode = ModeRequest(width: 1920, height: 1080, refreshHz: 60)

    @Option(help: "Render queue strategies to measure: round-robin, priority, or both.")
    var strategy = "both"

    @Flag(help: "Print one JSON object instead of the table.")
    var json = false

    func validate() throws {
        guard frames >= 10 else { throw ValidationError("--frames \(frames): at least 10") }
        if scene == .clock { throw ValidationError("--scene clock: the clock picture has no layers to measure; use default, reference or a file") }
        guard ["round-robin", "priority", "both"].contains(strategy) else {
            throw ValidationError("--strategy \(strategy): one of round-robin, priority, both")
        }
    }

    func run() throws {
        do { try runBench() } catch let exit as ExitCode { throw exit } catch { throw fail(error) }
    }

    private func runBench() throws {
        let displayMode = DisplayMode(width: mode.width, height: mode.height, refreshMilliHz: (mode.refreshHz ?? 60) * 1000)
        let size = displayMode.size
        let fullFrame = size.width * size.height * 4
        let icons = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-bench-icons").path
        let clockStart = 1_700_000_000

        let memcpyMs = measureMemcpy(bytes: fullFrame, frames: frames)
        let baseline = try measureBaseline(size: size, icons: icons, clockStart: clockStart, refresh: displayMode.refreshHz)
        let strategies: [RenderQueuePool.Strategy] = switch strategy {
        case "round-robin": [.roundRobin]
        case "priority": [.priority]
        default: [.roundRobin, .priority]
        }
        var ours: [(RenderQueuePool.Strategy, BenchFigures)] = []
        for s in strategies {
            ours.append((s, try measureEngine(mode: displayMode, icons: icons, clockStart: clockStart, strategy: s)))
        }
        let best = ours.min { $0.1.totalCPUMsPerFrame < $1.1.totalCPUMsPerFrame }!
        let report = BenchReport(
            scene: sceneName, frames: frames, mode: displayMode.description, fullFrameBytes: fullFrame,
            ours: best.1, oursStrategy: best.0.rawValue,
            strategies: Dictionary(uniqueKeysWithValues: ours.map { ($0.0.rawValue, $0.1) }),
            baseline: baseline, memcpyMsPerFrame: memcpyMs)
        if json {
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.table)
        }
    }

    // MARK: contestants

    private func measureMemcpy(bytes: Int, frames: Int) -> Double {
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

    /// How the report names the scene.
    private var sceneName: String {
        switch scene {
        case .reference: "reference dashboard"
        case .file(let path): path
        default: "default scene"
        }
    }

    /// The scene file measured, or nil for the reference dashboard.
    private func scenePath() throws -> String? {
        switch scene {
        case .reference, .clock: return nil
        case .file(let path): return path
        case .default:
            guard let path = BundledScenes.defaultScene else {
                throw DisplayError("the default scene is missing: kioskd_KioskRuntime.resources must be installed next to the kioskd binary")
            }
            return path
        }
    }

    private func measureBaseline(size: Size, icons: String, clockStart: Int, refresh: Int) throws -> BenchFigures {
        if let path = try scenePath() {
            // The scene's layers at its clock time, redrawn whole.
            let (loop, _) = MainLoop.manual()
            let backend = try HeadlessBackend(mode: DisplayMode(width: size.width, height: size.height, refreshMilliHz: refresh * 1000), bufferCount: 2)
            let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: size))
            let clock = ClockBox(clockStart)
            let stage = try SceneStage(engine: engine, path: path, clock: { clock.value })
            return try measureNaive(size: size, refresh: refresh) { t in
                clock.value = clockStart + Int(t)
                stage.tickClocks()
                return flattenedContents(of: engine.rootLayer)
            }
        }
        let scene = try ReferenceDashboard(size: size, imageDirectory: icons, clock: clockStart)
        return try measureNaive(size: size, refresh: refresh) { t in
            scene.apply(sceneTime: t)
            scene.setClock(clockStart + Int(t))
            return scene.flattened()
        }
    }

    /// What `root` shows, back to front, as contents at screen rectangles: layers with content, and solid
    /// backgrounds as rectangles; moves only (transforms' scale and rotation are left out).
    private func flattenedContents(of root: Layer) -> [(content: any LayerContent, frame: Rect)] {
        var items: [(content: any LayerContent, frame: Rect)] = []
        func visit(_ layer: Layer, x: Int, y: Int) {
            guard !layer.isHidden, layer.opacity > 0 else { return }
            let ox = x + layer.frame.x + Int(layer.transform.translateX.rounded())
            let oy = y + layer.frame.y + Int(layer.transform.translateY.rounded())
            let frame = Rect(x: ox, y: oy, width: layer.frame.width, height: layer.frame.height)
            if let content = layer.content {
                items.append((content, frame))
            } else if let color = layer.backgroundColor, color.alpha > 0 {
                items.append((RectContent(color: color), frame))
            }
            for child in layer.children { visit(child, x: ox, y: oy) }
        }
        visit(root, x: 0, y: 0)
        return items
    }

    /// Times `NaiveFrameRenderer` over `frames` frames; `state(t)` moves the scene to `t` seconds and lists it.
    private func measureNaive(size: Size, refresh: Int, state: (Double) throws -> [(content: any LayerContent, frame: Rect)]) throws -> BenchFigures {
        let renderer = NaiveFrameRenderer()
        let stride = size.width * 4
        let memory = UnsafeMutableRawPointer.allocate(byteCount: stride * size.height, alignment: 64)
        defer { memory.deallocate() }
        let buffer = PixelBuffer(index: 0, base: memory, size: size, stride: stride)
        try renderer.render(items: try state(0), into: buffer)  // warm-up: fonts, image decode
        var perFrame = LatencyRecorder()
        let process = CPUTime.process(), thread = CPUTime.thread()
        for i in 1...frames {
            let items = try state(Double(i) / Double(refresh))
            let before = CPUTime.thread()
            try renderer.render(items: items, into: buffer)
            perFrame.record(.nanoseconds(Int64((CPUTime.thread() - before) * 1e6)))
        }
        return BenchFigures(
            mainCPUMsPerFrame: (CPUTime.thread() - thread) / Double(frames),
            totalCPUMsPerFrame: (CPUTime.process() - process) / Double(frames),
            bytesWrittenPerFrame: size.width * size.height * 4,
            mainMsP99: perFrame.summary.p99, framesFlipped: frames, missedVblanks: 0, firstFrameMs: 0)
    }

    private func measureEngine(mode: DisplayMode, icons: String, clockStart: Int, strategy: RenderQueuePool.Strategy) throws -> BenchFigures {
        let loop = try MainLoop.epoll()
        let backend = try HeadlessBackend(mode: mode, bufferCount: 2)
        let compositor = CountingCompositor(try ShadowCompositor(size: mode.size))
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: RenderQueuePool(strategy: strategy))
        var keep: AnyObject
        if let path = try scenePath() {
            let clock = ClockBox(clockStart)
            let begin = MonotonicInstant.now()
            keep = try SceneStage(engine: engine, path: path, clock: {
                clock.value = clockStart + Int((MonotonicInstant.now() - begin).milliseconds / 1000)
                return clock.value
            })
        } else {
            let scene = try ReferenceDashboard(size: mode.size, imageDirectory: icons, clock: clockStart)
            engine.rootLayer.addChild(scene.root)
            scene.animate(on: engine, clock: { clockStart + Int($0) })
            keep = scene
        }

        let started = MonotonicInstant.now()
        var firstFrameMs = 0.0
        var measuring = false
        var flips = FlipStatistics()
        var perFrame = LatencyRecorder()
        var lastThread = 0.0, startThread = 0.0, startProcess = 0.0, startBytes = 0
        engine.onFlip = { event in
            if !measuring {
                // The warm-up ends with the first frame that has every layer rendered.
                guard engine.rendersInFlight == 0, engine.transaction.pendingDisplayCount == 0,
                      engine.stats.rendersCompleted > 0 else { return }
                firstFrameMs = (MonotonicInstant.now() - started).milliseconds
                measuring = true
                startThread = CPUTime.thread(); lastThread = startThread
                startProcess = CPUTime.process()
                startBytes = compositor.bytesCopied
                return
            }
            flips.record(event)
            let now = CPUTime.thread()
            perFrame.record(.nanoseconds(Int64((now - lastThread) * 1e6)))
            lastThread = now
            if flips.framesFlipped >= frames { loop.stop() }
        }
        try engine.start()
        let watchdog = loop.addTimer(after: .seconds(Int64(frames / 10 + 60))) { loop.stop() }
        loop.run()
        watchdog.cancel()
        let endThread = CPUTime.thread(), endProcess = CPUTime.process()
        engine.stop()
        withExtendedLifetime(keep) {}
        guard flips.framesFlipped >= frames else {
            throw DisplayError("bench: the engine flipped \(flips.framesFlipped) of \(frames) frames before the time limit")
        }
        let n = Double(flips.framesFlipped)
        return BenchFigures(
            mainCPUMsPerFrame: (endThread - startThread) / n,
            totalCPUMsPerFrame: (endProcess - startProcess) / n,
            bytesWrittenPerFrame: (compositor.bytesCopied - startBytes) / flips.framesFlipped,
            mainMsP99: perFrame.summary.p99, framesFlipped: flips.framesFlipped,
            missedVblanks: Int(flips.missedVblanks), firstFrameMs: (firstFrameMs * 100).rounded() / 100)
    }
}

/// CPU time in milliseconds.
enum CPUTime {
    static func thread() -> Double { read(CLOCK_THREAD_CPUTIME_ID) }
    static func process() -> Double { read(CLOCK_PROCESS_CPUTIME_ID) }
    private static func read(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }
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

struct BenchFigures: Codable {
    var mainCPUMsPerFrame: Double
    var totalCPUMsPerFrame: Double
    var bytesWrittenPerFrame: Int
    var mainMsP99: Double
    var framesFlipped: Int
    var missedVblanks: Int
    var firstFrameMs: Double

    enum CodingKeys: String, CodingKey {
        case mainCPUMsPerFrame = "mainCpuMsPerFrame", totalCPUMsPerFrame = "totalCpuMsPerFrame"
        case bytesWrittenPerFrame, mainMsP99, framesFlipped, missedVblanks, firstFrameMs
    }
}

/// The wall-clock time a benchmarked scene's clocks show. Main thread.
final class ClockBox {
    var value: Int
    init(_ value: Int) { self.value = value }
}

struct BenchReport: Codable {
    var scene: String
    var frames: Int
    var mode: String
    var fullFrameBytes: Int
    var ours: BenchFigures
    var oursStrategy: String
    var strategies: [String: BenchFigures]
    var baseline: BenchFigures
    var memcpyMsPerFrame: Double
    var cpuRatioVsBaseline: Double
    var bytesRatioVsFullFrame: Double
    var cpuRatioVsMemcpy: Double
    var targets: [String: Bool]

    init(scene: String, frames: Int, mode: String, fullFrameBytes: Int, ours: BenchFigures, oursStrategy: String,
         strategies: [String: BenchFigures], baseline: BenchFigures, memcpyMsPerFrame: Double) {
        self.scene = scene; self.frames = frames; self.mode = mode; self.fullFrameBytes = fullFrameBytes
        self.ours = ours; self.oursStrategy = oursStrategy; self.strategies = strategies
        self.baseline = baseline; self.memcpyMsPerFrame = memcpyMsPerFrame
        cpuRatioVsBaseline = ours.totalCPUMsPerFrame / max(baseline.totalCPUMsPerFrame, 1e-9)
        bytesRatioVsFullFrame = Double(ours.bytesWrittenPerFrame) / Double(fullFrameBytes)
        cpuRatioVsMemcpy = ours.totalCPUMsPerFrame / max(memcpyMsPerFrame, 1e-9)
        targets = [
            "total_cpu_at_most_one_fifth_of_baseline": cpuRatioVsBaseline <= 0.2,
            "bytes_at_most_10_percent_of_full_frame": bytesRatioVsFullFrame <= 0.1,
            "main_p99_at_most_2_ms": ours.mainMsP99 <= 2,
        ]
    }

    var table: String {
        func row(_ name: String, _ f: BenchFigures) -> String {
            let pct = Double(f.bytesWrittenPerFrame) / Double(fullFrameBytes) * 100
            return name.padding(toLength: 24, withPad: " ", startingAt: 0)
                + String(format: "%10.3f %10.3f %12d (%5.1f%%) %9.3f", f.mainCPUMsPerFrame, f.totalCPUMsPerFrame,
                         f.bytesWrittenPerFrame, pct, f.mainMsP99)
        }
        func verdict(_ ok: Bool) -> String { ok ? "met" : "MISSED" }
        var lines = ["kioskd bench: \(scene), \(mode), \(frames) frames each, headless",
                     "".padding(toLength: 24, withPad: " ", startingAt: 0) + "   main ms   total ms   bytes/frame             main p99"]
        for (name, f) in strategies.sorted(by: { $0.key < $1.key }) {
            lines.append(row("engine (\(name))", f) + String(format: "   first frame %.1f ms", f.firstFrameMs))
        }
        lines.append(row("naive full redraw", baseline))
        lines.append("memcpy of a full frame".padding(toLength: 24, withPad: " ", startingAt: 0)
                     + String(format: "%10.3f %10.3f %12d", memcpyMsPerFrame, memcpyMsPerFrame, fullFrameBytes))
        lines.append(String(format: "engine (%@) vs baseline: total CPU %.3fx (target <= 0.2: %@)", oursStrategy, cpuRatioVsBaseline,
                            verdict(cpuRatioVsBaseline <= 0.2)))
        lines.append(String(format: "bytes written vs a full frame: %.2f%% (target <= 10%%: %@)", bytesRatioVsFullFrame * 100,
                            verdict(bytesRatioVsFullFrame <= 0.1)))
        lines.append(String(format: "main-thread p99: %.3f ms (target <= 2 ms: %@)", ours.mainMsP99, verdict(ours.mainMsP99 <= 2)))
        lines.append(String(format: "engine vs memcpy floor: %.2fx the CPU of copying one full frame", cpuRatioVsMemcpy))
        return lines.joined(separator: "\n")
    }
}
