/// Shows a video's frames on its layer at the vblank nearest each one's due time. Frames with a due time wait in a
/// `VideoFrameSchedule`; while any wait, the pacer ticks with the engine's display link (so flips keep coming) and,
/// at each tick, hands the layer the newest frame due by the vblank the next page flip reaches. A frame with no due
/// time (prerolled by a paused seek) is shown at once in place of those waiting. Once nothing waits the display link
/// is let go: a paused or ended video costs no frames.
///
/// Main thread, like the engine.
public final class VideoFramePacer {
    private unowned let engine: LayerEngine
    private weak var layer: Layer?
    private var schedule = VideoFrameSchedule()
    private var ticking = false
    /// Called with each frame handed to the layer, and with whether a present carried it to the screen.
    private let shown: (VideoFrame, Bool) -> Void
    /// Frames superseded while waiting, before any vblank could show them.
    public private(set) var superseded = 0

    public init(engine: LayerEngine, layer: Layer, shown: @escaping (VideoFrame, Bool) -> Void) {
        self.engine = engine
        self.layer = layer
        self.shown = shown
    }

    /// Frames waiting for their vblank.
    public var waitingCount: Int { schedule.waiting.count }

    /// A frame from the decoder, in the order they come.
    public func add(_ frame: VideoFrame) {
        guard frame.due != nil else {
            superseded += schedule.removeAll()
            show(frame)
            return
        }
        superseded += schedule.add(frame)
        guard !ticking else { return }
        ticking = true
        engine.addAnimation(target: self) { pacer, tick in pacer.tick(tick) }
    }

    /// Shows the newest waiting frame at once and drops the others (an item is let go: its last frame stays).
    public func flushShowingNewest() {
        guard let newest = schedule.waiting.last else { return }
        superseded += schedule.removeAll() - 1
        show(newest)
    }

    /// Drops every waiting frame (the placeholder replaces the video).
    public func discard() {
        superseded += schedule.removeAll()
    }

    private func tick(_ tick: DisplayTick) -> Bool {
        let (frame, skipped) = schedule.take(forVblankAt: tick.nextVblank, period: engine.displayLink.frameDuration)
        superseded += skipped
        if let frame { show(frame) }
        ticking = !schedule.isEmpty
        return ticking
    }

    private func show(_ frame: VideoFrame) {
        guard let layer else {
            shown(frame, false)
            return
        }
        engine.showExternalSurface(frame.surface, on: layer) { [shown] wasShown in shown(frame, wasShown) }
    }
}
