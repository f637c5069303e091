import Glibc
import KioskCore

/// One `kioskd run` on the first output's engine: counts flips, stops at `--frames N` or on request at a frame boundary, and
/// notes (and reports, for systemd's READY=1) the flip of the first frame with every layer rendered. Lives on
/// the main thread.
final class RunSession {
    let engine: LayerEngine
    private let frameLimit: Int?
    private let controlSocket: ControlWiring?
    private(set) var flips = FlipStatistics()
    /// Milliseconds from process start to the first flip of a frame composed with every layer rendered; nil if
    /// no such frame flipped.
    private(set) var firstCompleteFrameMs: Double?
    /// Runs once, at the flip that put the first frame with every layer rendered on screen (systemd's READY=1).
    var onFirstCompleteFrame: (() -> Void)?
    private var stopping = false
    /// The engine presents the next frame from inside the flip that ends the run, and stopping the display
    /// completes that flip: it is past the end and not counted.
    private var finished = false
    /// A frame composed with nothing left to render was queued: the flip that shows it is the first complete one.
    private var completeFrameQueued = false
    /// The engine's presents and flips, heard while the run lasts, beside whoever else listens to them.
    private var engineListeners: [ListenerToken] = []
    /// SIGTERM/SIGINT (`stopOnSignals`).
    private var stopListener: ListenerToken?

    init(engine: LayerEngine, frameLimit: Int?, controlSocket: ControlWiring?) {
        self.engine = engine
        self.frameLimit = frameLimit
        self.controlSocket = controlSocket
    }

    /// Starts the engine (unless it runs already: an output slot's engine starts with its slot) and turns the loop
    /// until the run ends.
    func run(startingEngine: Bool = true) throws {
        if engineListeners.isEmpty { begin() }
        if startingEngine { try engine.start() }
        engine.loop.run()
    }

    /// Starts counting flips, without turning the loop (`run` turns it; a test may turn it itself).
    func begin() {
        engineListeners = [
            engine.addPresentListener { [unowned self] _ in
                if !completeFrameQueued, !engine.isRendering(engine.rootLayer) { completeFrameQueued = true }
            },
            engine.addFlipListener { [unowned self] event in flipped(event) },
        ]
        controlSocket?.liveStats = { [unowned self] in flips }
        // --frames N counts flips, and a still scene causes none: keep the display link ticking (unchanged
        // frames are presented) until the count is reached.
        if frameLimit != nil { engine.addAnimation(target: self) { session, _ in !session.finished } }
    }

    /// SIGTERM and SIGINT stop the run (`requestStop`).
    func stopOnSignals(_ signals: SignalRouting) {
        stopListener = signals.addStopListener { [weak self] in self?.requestStop() }
    }

    /// SIGTERM/SIGINT: stop at the next flip, a frame boundary; with nothing on the way, now.
    func requestStop() {
        stopping = true
        if engine.backend?.isFlipPending != true { engine.loop.stop() }
    }

    private func flipped(_ event: FlipEvent) {
        guard !finished else { return }
        flips.record(event)
        if firstCompleteFrameMs == nil, completeFrameQueued {
            firstCompleteFrameMs = ProcessClock.millisecondsSinceStart()
            onFirstCompleteFrame?()
        }
        if let frameLimit, flips.framesFlipped >= frameLimit { stopping = true }
        if stopping {
            finished = true
            engine.loop.stop()
        }
    }
}
