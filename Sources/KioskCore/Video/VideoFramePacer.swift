/// Shows a video's frames on its layer at the vblank nearest each one's due time. Frames with a due time wait in a
/// `VideoFrameSchedule`; while any wait, the pacer ticks with the engine's display link (so flips keep coming) and,
/// at each tick, hands the layer the newest frame due by the vblank the next page flip reaches. A frame that comes
/// due while the pacer is idle (the first of a clip) is handed over at once rather than at the first tick, which is
/// a flip away. A frame with no due
/// time (prerolled by a paused seek) is shown at once in place of those waiting. Once nothing waits the display link
/// is let go: a paused or ended video costs no frames. `whenDrained` runs an action once the last frame handed over
/// is on screen (the flip after its present), so an item's end is reported with its last frame, not before it.
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
    /// Called with each frame that has a due time as it is handed to the layer, and the vblank it was picked for
    /// (the next page flip's; now, for one handed over while the pacer was idle): a sync group measures each
    /// frame's vblank against its group due time with it.
    public var onPicked: ((VideoFrame, MonotonicInstant) -> Void)?
    /// Actions waiting for the frames handed over to be on screen (`whenDrained`), and the timer that runs them
    /// anyway when no flip comes (no output, a blanked one).
    private var drainActions: [() -> Void] = []
    private var drainDeadline: TimerHandle?
    /// Ticks of the display link while frames wait or actions do, and the tick at which the last frame handed to
    /// the layer went out in a present (nil while it has not).
    private var ticks = 0
    private var lastFramePresentedAtTick: Int?
    /// The longest `whenDrained` waits for a flip before it runs its actions.
    public static let drainTimeout = Duration.milliseconds(250)

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
        if !ticking {
            // The display link is not running: its first tick is a flip away, two vblanks at worst, by when the
            // next frame may be due too. A frame due now goes out at once (an idle output presents at once).
            let now = engine.loop.now
            let (due, skipped) = schedule.take(forVblankAt: now, period: engine.displayLink.frameDuration)
            superseded += skipped
            if let due {
                onPicked?(due, now)
                show(due)
            }
        }
        startTicking()
    }

    /// Runs `action` once every frame handed over is on screen: nothing waits for its vblank, and a flip completed
    /// after the present that carried the last one. At once when nothing is pending; after `drainTimeout` at the
    /// latest.
    public func whenDrained(_ action: @escaping () -> Void) {
        guard !isDrained else { return action() }
        drainActions.append(action)
        if drainDeadline == nil {
            drainDeadline = engine.loop.addTimer(after: Self.drainTimeout) { [weak self] in self?.runDrainActions() }
        }
        startTicking()
    }

    private var isDrained: Bool {
        schedule.isEmpty && (lastFramePresentedAtTick.map { ticks > $0 } ?? true)
    }

    private func runDrainActions() {
        drainDeadline?.cancel()
        drainDeadline = nil
        let actions = drainActions
        drainActions = []
        for action in actions { action() }
    }

    private func startTicking() {
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
        ticks += 1
        let (frame, skipped) = schedule.take(forVblankAt: tick.nextVblank, period: engine.displayLink.frameDuration)
        superseded += skipped
        if let frame {
            onPicked?(frame, tick.nextVblank)
            show(frame)
        }
        if !drainActions.isEmpty, isDrained { runDrainActions() }
        ticking = !schedule.isEmpty || !drainActions.isEmpty
        return ticking
    }

    private func show(_ frame: VideoFrame) {
        guard let layer else {
            shown(frame, false)
            return
        }
        // Not presented yet: a drain waits for the present, then for a flip after it.
        lastFramePresentedAtTick = Int.max
        engine.showExternalSurface(frame.surface, on: layer) { [weak self, shown] wasShown in
            self?.lastFramePresentedAtTick = self?.ticks
            shown(frame, wasShown)
        }
    }
}
