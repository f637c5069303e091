import Histogram

/// The layer engine's telemetry, as the stats file and the control socket report it. A plain value; the keys are
/// snake_case whatever the encoder's key strategy, because scripts and CI read them.
public struct EngineStats: Codable, Sendable, Equatable {
    /// Renders dispatched (to the pool, or run synchronously).
    public var rendersStarted = 0
    /// Renders that came back, whatever became of them.
    public var rendersCompleted = 0
    /// Renders not shown: overtaken by a newer request (sentinel mismatch), cancelled early, or for a layer that
    /// was freed meanwhile.
    public var staleRendersDropped = 0
    /// Renders whose content threw: counted as completed, not as stale, and logged.
    public var rendersFailed = 0
    /// Calls to `Compositing.compose`: frames whose damage was recomposed into the shadow buffer.
    public var framesComposed = 0
    /// Compositions that a newer one replaced before they reached a scanout buffer (composed while a flip was
    /// pending, then composed over again before the flip completed).
    public var compositionsReplaced = 0
    /// Buffers queued with `DisplayBackend.present`.
    public var framesPresented = 0
    /// Of those, presents with nothing new, made only so flips keep driving the display link while something
    /// animates.
    public var unchangedFramesPresented = 0
    /// Flip events received.
    public var framesFlipped = 0
    /// Bytes copied from the shadow buffer into a scanout buffer per present.
    public var bytesCopiedPerFrame = ByteCountSummary()
    /// Drawing time per content kind (`text`, `image`, `rasterized`, ...).
    public var renderMs: [String: LatencySummary] = [:]
    /// Flips per second, measured the YYFPSLabel way: flips counted over at least one second, then reported.
    public var fps = 0.0
    public var loopIterations = 0
    public var loopWakeups = 0
    /// The render pool's strategy (`round_robin`, `priority`, `manual`) and size.
    public var renderStrategy = RenderQueuePool.Strategy.roundRobin
    public var renderWorkers = 0
    /// Render jobs in the pool when the stats were taken.
    public var renderJobsQueued = 0
    public var renderJobsRunning = 0
    /// Failed presents by errno name (`EBUSY`, `EACCES`, ...; `unknown` when no errno was involved).
    public var presentFailures: [String: Int] = [:]
    /// Presents retried at the next vblank after a transient failure (EBUSY).
    public var presentRetries = 0
    /// Times DRM master was lost.
    public var masterLost = 0
    /// Flips not completed within `LayerEngine.flipTimeout`.
    public var flipTimeouts = 0
    /// Flip deadlines that found the driver's vblanks slowed with the flip (a starved machine) and waited longer
    /// instead of counting a timeout.
    public var flipDeadlinesExtended = 0
    /// Fallbacks after the kernel refused a configuration (EINVAL, ENOSPC at commit): to legacy commits, to the
    /// preferred mode, and to the preferred mode of another size (the output opened again).
    public var configurationFallbacks = 0
    /// The repaint window's lead in use when the stats were taken (milliseconds; 0 when off, or closed after a near
    /// miss or a missed vblank), the flips that missed the vblank their window aimed at, and the presents made in a
    /// window that went out within `RepaintWindow.closeCall(for:)` of their vblank (each miss or near miss closed
    /// the window for a hold).
    public var repaintWindowMs = 0.0
    public var repaintWindowMisses = 0
    public var repaintWindowNearMisses = 0
    /// The health signal (`FrameHealth`) when the stats were taken, and why.
    public var healthy = true
    public var healthReason = "ok"
    /// The fingerprint of the frame on screen (`FrameFingerprint.hex`, 16 hex digits), nil before the first flip or
    /// while the output is dark.
    public var fingerprint: String?
    /// Tiles of the frame fingerprint hashed so far: only tiles a composition touched are hashed again.
    public var tilesHashed = 0
    /// Changes the scene expected to see (a clock's seconds, a video's frames) since the frame on screen last
    /// changed: past `health.frozen_after`, the screen is frozen.
    public var expectedChangesMissed = 0
    /// Layer surface memory: total, by page, the largest, purges and re-renders.
    public var surfaces = SurfaceStatistics()
    /// Page changes that had to wait for their page to render (after a purge): how long they waited.
    public var pageReadyMs = LatencySummary()
    /// Each plane-eligible layer (a video, `plane: true`) shown at the last composition: on an overlay plane or
    /// composited, and why.
    public var layerPaths: [LayerPathReport] = []

    public init() {}

    enum CodingKeys: String, CodingKey {
        case rendersStarted = "renders_started"
        case rendersCompleted = "renders_completed"
        case staleRendersDropped = "stale_renders_dropped"
        case rendersFailed = "renders_failed"
        case framesComposed = "frames_composed"
        case compositionsReplaced = "compositions_replaced"
        case framesPresented = "frames_presented"
        case unchangedFramesPresented = "unchanged_frames_presented"
        case framesFlipped = "frames_flipped"
        case bytesCopiedPerFrame = "bytes_copied_per_frame"
        case renderMs = "render_ms"
        case fps
        case loopIterations = "loop_iterations"
        case loopWakeups = "loop_wakeups"
        case renderStrategy = "render_strategy"
        case renderWorkers = "render_workers"
        case renderJobsQueued = "render_jobs_queued"
        case renderJobsRunning = "render_jobs_running"
        case presentFailures = "present_failures"
        case presentRetries = "present_retries"
        case masterLost = "master_lost"
        case flipTimeouts = "flip_timeouts"
        case flipDeadlinesExtended = "flip_deadlines_extended"
        case configurationFallbacks = "configuration_fallbacks"
        case repaintWindowMs = "repaint_window_ms"
        case repaintWindowMisses = "repaint_window_misses"
        case repaintWindowNearMisses = "repaint_window_near_misses"
        case healthy
        case healthReason = "health_reason"
        case fingerprint
        case tilesHashed = "tiles_hashed"
        case expectedChangesMissed = "expected_changes_missed"
        case surfaces
        case pageReadyMs = "page_ready_ms"
        case layerPaths = "layer_paths"
    }
}

/// Percentiles of a byte-count distribution, as stats files report them.
public struct ByteCountSummary: Codable, Sendable, Equatable {
    public var p50: Int
    public var max: Int
    public var count: UInt64

    public init(p50: Int = 0, max: Int = 0, count: UInt64 = 0) {
        self.p50 = p50; self.max = max; self.count = count
    }
}

/// Byte counts in an HdrHistogram (2 significant digits, within 1 %, up to 64 GiB: 30 KB of buckets, where three
/// digits take 221 KB; see `LatencyRecorder`). The maximum is kept exactly beside it: the histogram reports the top
/// of the maximum's bucket, and a full-screen copy should read as exactly that. A value type owned by the engine.
struct ByteCountRecorder {
    private var histogram = Histogram<UInt64>(highestTrackableValue: 1 << 36, numberOfSignificantValueDigits: .two)
    private var maximum = 0

    mutating func record(_ bytes: Int) {
        let clamped = min(max(bytes, 0), 1 << 36)
        _ = histogram.record(UInt64(clamped))
        maximum = max(maximum, clamped)
    }

    var summary: ByteCountSummary {
        guard histogram.totalCount > 0 else { return ByteCountSummary() }
        return ByteCountSummary(p50: min(Int(histogram.valueAtPercentile(50)), maximum), max: maximum,
                                count: histogram.totalCount)
    }
}

/// Frames per second the YYFPSLabel way: count ticks, and once at least a second has passed since the last report,
/// report count / elapsed and start again. A value type owned by the engine (main thread).
struct FPSCounter {
    private var lastReport: MonotonicInstant?
    private var count = 0
    /// The latest report; 0 until a second has passed.
    private(set) var fps = 0.0

    mutating func record(_ timestamp: MonotonicInstant) {
        guard let last = lastReport else {
            lastReport = timestamp
            return
        }
        count += 1
        let elapsed = timestamp - last
        guard elapsed >= .seconds(1) else { return }
        fps = (Double(count) / (elapsed.milliseconds / 1000) * 100).rounded() / 100
        count = 0
        lastReport = timestamp
    }
}
