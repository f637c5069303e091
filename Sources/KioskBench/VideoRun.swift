import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender

/// Not product code: the `video` scenario. A clip plays through a `VideoPlayerMaking` (GStreamer, from `kioskd`)
/// scaled to the video's box (the screen's width, above a strip of `stripHeight` pixels), three ways side by side,
/// each on a real epoll loop in real time:
///
/// - `composited`: kioskd's path without overlay planes: each frame shown on the video layer at the vblank nearest
///   its due time (`VideoFramePacer`, through `showExternalSurface`), composed into the shadow buffer and copied
///   into the headless scanout buffer, beside a small layer in the strip re-rendered ten times a second on the
///   pool (do other widgets keep updating?);
/// - `plane`: the same on an output with an overlay plane (`HeadlessPlaneOutput`): the engine puts the video layer
///   on the plane (nothing overlaps it), the compositor skips it, and each frame is copied into the plane's back
///   buffer at the present, as `DRMOverlayPlanes` does on DRM; the kernel's part (the commit, the scanout) is not
///   there to measure;
/// - `naive_copy`: each decoded frame copied straight into a scanout-sized buffer on the main thread, no engine.
///
/// Decoding runs on GStreamer's threads in every contestant; the main thread's CPU per shown frame is what each
/// path costs beyond decoding.
public enum VideoRun {
    /// One contestant's figures; nil where not measured.
    public struct Figures: Codable, Sendable {
        public var mainCPUMsPerShownFrame: Double?
        public var totalCPUMsPerShownFrame: Double?
        public var framesDecoded: Int?
        public var framesShown: Int?
        public var framesDropped: Int?
        public var mainMsP99: Double?
        /// Renders of the other widget applied during the run (the engine's contestants).
        public var otherWidgetUpdates: Int?
        public var seconds: Double?
        /// How the engine showed the video layer at the end (`stats`' `layer_paths`): `plane` or `composited`, and why.
        public var layerPath: String?
        public var layerPathReason: String?
        /// Frames copied into the overlay plane's buffers (the plane contestant).
        public var planeFramesCopied: Int?

        enum CodingKeys: String, CodingKey {
            case mainCPUMsPerShownFrame = "main_cpu_ms_per_shown_frame", totalCPUMsPerShownFrame = "total_cpu_ms_per_shown_frame"
            case framesDecoded = "frames_decoded", framesShown = "frames_shown", framesDropped = "frames_dropped"
            case mainMsP99 = "main_ms_p99", otherWidgetUpdates = "other_widget_updates", seconds
            case layerPath = "layer_path", layerPathReason = "layer_path_reason", planeFramesCopied = "plane_frames_copied"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mainCPUMsPerShownFrame, forKey: .mainCPUMsPerShownFrame)
            try c.encode(totalCPUMsPerShownFrame, forKey: .totalCPUMsPerShownFrame)
            try c.encode(framesDecoded, forKey: .framesDecoded)
            try c.encode(framesShown, forKey: .framesShown)
            try c.encode(framesDropped, forKey: .framesDropped)
            try c.encode(mainMsP99, forKey: .mainMsP99)
            try c.encode(otherWidgetUpdates, forKey: .otherWidgetUpdates)
            try c.encode(seconds, forKey: .seconds)
            try c.encode(layerPath, forKey: .layerPath)
            try c.encode(layerPathReason, forKey: .layerPathReason)
            try c.encode(planeFramesCopied, forKey: .planeFramesCopied)
        }
    }

    public struct Scenario: Codable, Sendable {
        public var mode: String
        public var clip: String
        public var frames: Int
        public var composited: Figures
        public var naiveCopy: Figures
        public var plane: Figures

        enum CodingKeys: String, CodingKey {
            case mode, clip, frames, composited, naiveCopy = "naive_copy", plane
        }
    }

    /// Plays `clip` (at least `frames` frames long) with each contestant until `frames` frames were played through
    /// (shown, or dropped and counted).
    public static func run(clip: String, mode: OutputMode, frames: Int,
                           makeVideo: (MainLoop) throws -> any VideoPlayerMaking) throws -> Scenario {
        Scenario(mode: mode.description, clip: clip, frames: frames,
                 composited: try engine(clip: clip, mode: mode, frames: frames, planes: false, makeVideo: makeVideo),
                 naiveCopy: try naiveCopy(clip: clip, mode: mode, frames: frames, makeVideo: makeVideo),
                 plane: try engine(clip: clip, mode: mode, frames: frames, planes: true, makeVideo: makeVideo))
    }

    /// The strip under the video, where the other widget lives: a plane above the primary covers whatever is
    /// composited over its layer, so a widget over the video would keep it off the plane.
    static let stripHeight = 120

    static func videoBox(_ mode: OutputMode) -> Rect {
        Rect(x: 0, y: 0, width: mode.width, height: max(mode.height - stripHeight, 2))
    }

    private static func request(_ clip: String, _ mode: OutputMode) -> VideoPlayerRequest {
        VideoPlayerRequest(source: clip, size: videoBox(mode).size, fit: .fill, muted: true, volume: 0)
    }

    /// The engine's path: composited on a headless output, or on an overlay plane of `HeadlessPlaneOutput`.
    static func engine(clip: String, mode: OutputMode, frames: Int, planes: Bool,
                       makeVideo: (MainLoop) throws -> any VideoPlayerMaking) throws -> Figures {
        let loop = try MainLoop.epoll()
        let planeOutput = planes ? try HeadlessPlaneOutput(mode: mode) : nil
        let backend: any DisplayBackend = try planeOutput ?? HeadlessBackend(mode: mode, bufferCount: 2)
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: mode.size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        engine.overlayPlanes = planeOutput
        let video = Layer(frame: videoBox(mode), content: RectContent(fill: .solid(.black)), name: "video")
        // As kioskd's video widget: its body prefers a plane, and goes on one where the output has one.
        video.prefersOverlayPlane = true
        let other = Layer(frame: Rect(x: 40, y: mode.height - stripHeight + 10, width: 320, height: stripHeight - 20),
                          content: RectContent(fill: .solid(.white)), name: "other")
        engine.rootLayer.addChild(video)
        engine.rootLayer.addChild(other)
        var otherUpdates = 0
        other.didRender = { _, finished in if finished { otherUpdates += 1 } }
        var tick = 0
        let timer = loop.addTimer(after: .milliseconds(100), repeating: .milliseconds(100)) {
            tick += 1
            other.content = RectContent(fill: .solid(Color(red: Double(tick % 10) / 10, green: 0.5, blue: 0.5)))
        }
        try engine.start()
        let maker = try makeVideo(loop)
        let player = try maker.makePlayer(request(clip, mode))
        var shown = 0, notShown = 0, failure: String?
        let pacer = VideoFramePacer(engine: engine, layer: video) { _, wasShown in
            if wasShown { shown += 1 } else { notShown += 1 }
        }
        var perFrame = LatencyRecorder()
        var startThread = 0.0, startProcess = 0.0, lastThread = 0.0, begin = MonotonicInstant.now()
        var measuring = false
        player.onFrame = { frame in
            if !measuring {
                measuring = true
                startThread = CPUTime.thread(); lastThread = startThread
                startProcess = CPUTime.process()
                begin = MonotonicInstant.now()
            }
            pacer.add(frame)
        }
        let flipListener = engine.addFlipListener { _ in
            guard measuring else { return }
            let now = CPUTime.thread()
            perFrame.record(.nanoseconds(Int64((now - lastThread) * 1e6)))
            lastThread = now
            // Frames played through: shown or not, and those dropped before the main thread saw them.
            if shown + notShown + pacer.superseded + player.counts.dropped >= frames { loop.stop() }
        }
        player.onEvent = { event in
            switch event {
            case .started, .looped: break
            case .ended: loop.stop()
            case .failed(let message): failure = message; loop.stop()
            }
        }
        let watchdog = loop.addTimer(after: .seconds(Int64(frames / 10 + 60))) { loop.stop() }
        loop.run()
        watchdog.cancel()
        timer.cancel()
        flipListener.cancel()
        let endThread = CPUTime.thread(), endProcess = CPUTime.process(), seconds = (MonotonicInstant.now() - begin).seconds
        let counts = player.counts
        let path = engine.stats.layerPaths.first { $0.layer == "video" }
        player.close()
        engine.stop()
        if let failure { throw BenchError("bench video \(clip): \(failure)") }
        guard shown > 0 else { throw BenchError("bench video \(clip): no frame was shown") }
        return Figures(mainCPUMsPerShownFrame: (endThread - startThread) / Double(shown),
                       totalCPUMsPerShownFrame: (endProcess - startProcess) / Double(shown),
                       framesDecoded: counts.decoded, framesShown: shown, framesDropped: counts.dropped + notShown + pacer.superseded,
                       mainMsP99: perFrame.summary.p99, otherWidgetUpdates: otherUpdates, seconds: seconds,
                       layerPath: path?.path.rawValue, layerPathReason: path?.reason, planeFramesCopied: planeOutput?.framesCopied)
    }

    static func naiveCopy(clip: String, mode: OutputMode, frames: Int,
                          makeVideo: (MainLoop) throws -> any VideoPlayerMaking) throws -> Figures {
        let loop = try MainLoop.epoll()
        let stride = mode.width * 4
        let scanout = UnsafeMutableRawPointer.allocate(byteCount: stride * mode.height, alignment: 64)
        defer { scanout.deallocate() }
        let maker = try makeVideo(loop)
        let player = try maker.makePlayer(request(clip, mode))
        var copied = 0, failure: String?
        var perFrame = LatencyRecorder()
        var startThread = 0.0, startProcess = 0.0, begin = MonotonicInstant.now()
        player.onFrame = { frame in
            let t0 = CPUTime.thread()
            if copied == 0 {
                startThread = t0
                startProcess = CPUTime.process()
                begin = MonotonicInstant.now()
            }
            let surface = frame.surface
            let rows = min(surface.size.height, mode.height), rowBytes = min(surface.stride, stride)
            for y in 0..<rows { (scanout + y * stride).copyMemory(from: surface.bytes + y * surface.stride, byteCount: rowBytes) }
            copied += 1
            perFrame.record(.nanoseconds(Int64((CPUTime.thread() - t0) * 1e6)))
            if copied + player.counts.dropped >= frames { loop.stop() }
        }
        player.onEvent = { event in
            switch event {
            case .started, .looped: break
            case .ended: loop.stop()
            case .failed(let message): failure = message; loop.stop()
            }
        }
        let watchdog = loop.addTimer(after: .seconds(Int64(frames / 10 + 60))) { loop.stop() }
        loop.run()
        watchdog.cancel()
        let endThread = CPUTime.thread(), endProcess = CPUTime.process(), seconds = (MonotonicInstant.now() - begin).seconds
        let counts = player.counts
        player.close()
        if let failure { throw BenchError("bench video \(clip): \(failure)") }
        guard copied > 0 else { throw BenchError("bench video \(clip): no frame was copied") }
        return Figures(mainCPUMsPerShownFrame: (endThread - startThread) / Double(copied),
                       totalCPUMsPerShownFrame: (endProcess - startProcess) / Double(copied),
                       framesDecoded: counts.decoded, framesShown: copied, framesDropped: counts.dropped,
                       mainMsP99: perFrame.summary.p99, otherWidgetUpdates: nil, seconds: seconds)
    }
}
