import KioskCore
import KioskDisplay
import KioskRender

/// Not product code: `kioskd bench`'s page-transition scenarios, `page-slide` and `page-fade`. Two full-screen pages
/// (a gradient and a large text each) at 1920x1080 change into each other every second with a 0.5 s transition, so
/// about half the measured frames are inside a transition. Side by side in one run: the engine on a headless output
/// (every transition composed by the CPU), the same on an output with two overlay planes (`HeadlessPlaneOutput`,
/// where a slide puts each flattened page on a plane), and one memcpy of the frame (warm, and from cold memory).
/// Targets (issue 27), against the warm memcpy: main-thread CPU per frame composed at most `mainCPUTargetVsMemcpy`
/// memcpys (3 for a slide, 4 for a fade), and main-thread p99 at most 4 ms, both judged on the composed row.
public enum PageTransitionRun {
    public struct Scenario: Encodable, Sendable {
        public var scene: String
        public var transition: String
        public var mode: String
        public var fullFrameBytes: Int
        /// Composed by the CPU on an output without overlay planes.
        public var engine: BenchFigures
        /// On an output with two overlay planes.
        public var enginePlanes: BenchFigures
        /// Layer frames copied into plane buffers during the planes row's measured frames (a move copies none).
        public var planeFramesCopied: Int?
        /// Frames of the composed row written straight into the scanout buffer (opaque pages at whole pixels that
        /// tile the screen, or a page fading in composed band by band), with no composition into the shadow buffer.
        public var directFrames: Int?
        public var memcpyMsPerFrame: Double
        /// One memcpy of the frame from memory the cache no longer holds (`Contestants.coldMemcpyMsPerFrame`): the
        /// floor of a frame's memory traffic at this size. Reported beside the targets, which are judged against
        /// `memcpyMsPerFrame`.
        public var coldMemcpyMsPerFrame: Double
        public var mainCPUTargetVsMemcpy: Double
        public var mainP99TargetMs: Double

        enum CodingKeys: String, CodingKey {
            case scene, transition, mode, fullFrameBytes = "full_frame_bytes", engine, enginePlanes = "engine_planes"
            case planeFramesCopied = "plane_frames_copied", directFrames = "direct_frames", memcpyMsPerFrame = "memcpy_ms_per_frame", ratios
            case coldMemcpyMsPerFrame = "cold_memcpy_ms_per_frame"
            case mainCPUTargetVsMemcpy = "main_cpu_target_vs_memcpy", mainP99TargetMs = "main_p99_target_ms"
            case targetMet = "target_met"
        }

        /// `cpu_vs_memcpy` is total CPU (every thread) against the memcpy; `main_cpu_vs_memcpy` the main thread's.
        public var ratios: [String: Double?] {
            ["cpu_vs_memcpy": benchRatio(engine.totalCPUMsPerFrame, memcpyMsPerFrame),
             "main_cpu_vs_memcpy": benchRatio(engine.mainCPUMsPerFrame, memcpyMsPerFrame),
             "planes_main_cpu_vs_memcpy": benchRatio(enginePlanes.mainCPUMsPerFrame, memcpyMsPerFrame),
             "main_cpu_vs_cold_memcpy": benchRatio(engine.mainCPUMsPerFrame, coldMemcpyMsPerFrame),
             "bytes_vs_full_frame": benchRatio(engine.bytesWrittenPerFrame.map(Double.init), Double(fullFrameBytes)),
             "planes_bytes_vs_full_frame": benchRatio(enginePlanes.bytesWrittenPerFrame.map(Double.init), Double(fullFrameBytes))]
        }

        /// Both targets on the composed row; nil when a figure was not measured.
        public var targetMet: Bool? {
            guard let ratio = benchRatio(engine.mainCPUMsPerFrame, memcpyMsPerFrame), let p99 = engine.mainMsP99 else { return nil }
            return ratio <= mainCPUTargetVsMemcpy && p99 <= mainP99TargetMs
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(scene, forKey: .scene)
            try c.encode(transition, forKey: .transition)
            try c.encode(mode, forKey: .mode)
            try c.encode(fullFrameBytes, forKey: .fullFrameBytes)
            try c.encode(engine, forKey: .engine)
            try c.encode(enginePlanes, forKey: .enginePlanes)
            try c.encode(planeFramesCopied, forKey: .planeFramesCopied)
            try c.encode(directFrames, forKey: .directFrames)
            try c.encode(memcpyMsPerFrame, forKey: .memcpyMsPerFrame)
            try c.encode(coldMemcpyMsPerFrame, forKey: .coldMemcpyMsPerFrame)
            try c.encode(ratios, forKey: .ratios)
            try c.encode(mainCPUTargetVsMemcpy, forKey: .mainCPUTargetVsMemcpy)
            try c.encode(mainP99TargetMs, forKey: .mainP99TargetMs)
            try c.encode(targetMet, forKey: .targetMet)
        }
    }

    /// `page-slide` or `page-fade`, `frames` flips per row.
    public static func measure(transition: String, frames: Int) throws -> Scenario {
        let target: Double
        switch transition {
        case "slide": target = 3
        case "fade": target = 4
        default: throw BenchError("bench page transition \(transition): slide or fade")
        }
        let mode = OutputMode(width: 1920, height: 1080, refreshMilliHz: 60_000)
        let scene = "page-\(transition).yaml"
        let path = try BenchScenes.path(scene)
        let bytes = mode.width * mode.height * 4
        let composed = try Contestants.engine(scene: path, mode: mode, frames: frames, strategy: .roundRobin, overlayPlanes: 0)
        let planes = try Contestants.engine(scene: path, mode: mode, frames: frames, strategy: .roundRobin, overlayPlanes: 2)
        return Scenario(scene: scene, transition: transition, mode: mode.description, fullFrameBytes: bytes,
                        engine: composed.figures, enginePlanes: planes.figures, planeFramesCopied: planes.planeFramesCopied,
                        directFrames: composed.directFrames,
                        memcpyMsPerFrame: Contestants.memcpyMsPerFrame(bytes: bytes, frames: frames),
                        coldMemcpyMsPerFrame: Contestants.coldMemcpyMsPerFrame(bytes: bytes, frames: frames),
                        mainCPUTargetVsMemcpy: target, mainP99TargetMs: 4)
    }
}
