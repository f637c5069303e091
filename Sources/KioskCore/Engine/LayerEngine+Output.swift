import Logging

private let logger = Logger(label: "kioskd.engine")

/// A command that needs a display (a screenshot, power, the output's info) while none is connected. A plain value.
public struct NoOutputError: Error, CustomStringConvertible, Sendable {
    public init() {}
    public var description: String { "no display is connected" }
}

/// Outputs that come and go. The engine lives for the whole run with its tree, its renders and its display link;
/// an output (a backend and the compositor sized to its mode) is attached when a display is adopted and detached
/// when it is unplugged. What belongs to one output is reset with it: the frame it was last sent (so the next
/// output gets the whole screen), the composition waiting for a buffer, the pending tick, the fault holds and the
/// flip deadline. Counters (`stats`) run on across outputs. Main thread, like the engine.
extension LayerEngine {
    /// Whether an output is attached.
    public var hasOutput: Bool { backend != nil }

    /// Presents on `backend` from now on: at once if the engine runs (modeset, then the whole screen composed and
    /// presented at the next commit), else from `start`. When the output's scene size differs from the root's,
    /// the root takes it and the scene size listeners hear it, so the tree is laid out again before it is drawn.
    ///
    /// - Throws: `OutputError` when an output is attached already, when the compositor's size is not the mode's,
    ///   or from the backend's start (the engine is then without an output, as before).
    public func attachOutput(backend: any DisplayBackend, compositor: any Compositing) throws {
        if let current = self.backend {
            throw OutputError("\(backend.info.connector): cannot attach, \(current.info.connector) is attached")
        }
        try Self.checkSizes(backend: backend, compositor: compositor)
        resetOutputState()
        displayLink.frameDuration = backend.info.mode.frameDuration
        if state == .running { try startBackend(backend) }
        self.backend = backend
        self.compositor = compositor
        let sceneSize = compositor.sceneSize
        if Rect(size: sceneSize) != screen {
            screen = Rect(size: sceneSize)
            rootLayer.frame = screen
            sceneSizeListeners.emit(sceneSize)
        }
        redrawEverything()
        waker.wake()
    }

    /// Stops presenting on the attached output and lets it go: its pending flip completes (the backend's `stop`),
    /// waiting screenshots get the frame on screen or nil, and the backend and compositor are released. Renders
    /// in flight carry on and land; nothing is composed until the next `attachOutput`. Returns the backend that
    /// was detached, nil when none was attached.
    @discardableResult
    public func detachOutput() -> (any DisplayBackend)? {
        guard let backend else { return nil }
        // Cleared first: the pending flip the backend's stop completes must not present another frame.
        self.backend = nil
        self.compositor = nil
        // The planes belong to the output, and their buffers keep its card open.
        overlayPlanes = nil
        faults.cancelTimers()
        backend.onDeviceLost = nil
        if state == .running { backend.stop() }
        screenshots.frameFlipped(frontBuffer: { nil })
        resetOutputState()
        logger.info("\(backend.info.connector): output detached; the scene waits for a display")
        return backend
    }

    func startBackend(_ backend: any DisplayBackend) throws {
        backend.onDeviceLost = { [weak self] error in self?.deviceLost(error) }
        try backend.start(on: loop) { [weak self] event in self?.flipCompleted(event) }
    }

    private func resetOutputState() {
        faults.cancelTimers()
        faults = FrameFaultState()
        repaint.reset()
        lastFrame = FrameDiff.Record()
        composedHasVisibleContent = nil
        forgetScreen()
        forcedDamage = []
        compositionAwaitingPresent = false
        pendingTick = nil
        presentsEnabled = true
        framesFlippedOnOutput = 0
        needsComposite = true
    }
}
