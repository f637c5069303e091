/// Who hears the engine's events. Each party (the run session, the control socket, the service, the stage, a test)
/// adds its own listener and keeps the token in its own properties for as long as it listens; every listener hears
/// every event, in the order added, whoever was wired first (see `Listeners`).
///
/// Main thread, with the engine: add listeners there; they are called there.
extension LayerEngine {
    /// `listener` hears every flip event, after the engine's bookkeeping and before the next frame is presented
    /// from it (the run session's counters, readiness, the `flip` event).
    public func addFlipListener(_ listener: @escaping (FlipEvent) -> Void) -> ListenerToken {
        flipListeners.add(listener)
    }

    /// `listener` hears, after a newly composed frame (not an unchanged one) was queued for scanout, the damage
    /// copied into the scanout buffer (the `frame` event, the first complete frame).
    public func addPresentListener(_ listener: @escaping (_ damage: [Rect]) -> Void) -> ListenerToken {
        presentListeners.add(listener)
    }

    /// `listener` hears every fault on the frame path (a failed present, master lost, a flip timeout, the device
    /// gone), after it was logged and counted: for the control socket's `error` event.
    public func addFaultListener(_ listener: @escaping (FrameFault) -> Void) -> ListenerToken {
        faultListeners.add(listener)
    }

    /// `listener` hears, once, that the frame path cannot go on (see `FatalFrameError`), after the fault listeners
    /// heard it as a fault: kioskd then exits non-zero.
    public func addFatalListener(_ listener: @escaping (FatalFrameError) -> Void) -> ListenerToken {
        fatalListeners.add(listener)
    }

    /// `listener` hears that a layer's render failed (bad markup, an unreadable image): the layer's name and why.
    /// The layer keeps what it showed before.
    public func addRenderFailedListener(_ listener: @escaping (_ layer: String, _ message: String) -> Void) -> ListenerToken {
        renderFailedListeners.add { failure in listener(failure.layer, failure.message) }
    }

    /// `listener` hears that an attached output's scene size differs from the root's: the root has the new size by
    /// then, and whoever laid the tree out lays it out again.
    public func addSceneSizeListener(_ listener: @escaping (Size) -> Void) -> ListenerToken {
        sceneSizeListeners.add(listener)
    }
}
