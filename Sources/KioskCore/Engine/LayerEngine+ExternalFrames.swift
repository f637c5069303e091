/// Surfaces made outside the render pool, by a producer with its own threads and pacing (a video decoder): each
/// one is shown on its layer like a finished render, in the next composition, without a render job. The newest
/// one wins: a frame replaced before any present carried it counts as not shown. Main thread, like the engine.
extension LayerEngine {
    /// Shows `surface` (the layer's size) on `layer` from the next composition on. `shown` is called once: with
    /// true when a present carried the frame to the screen, with false when a newer frame replaced it first, the
    /// layer left this engine, or the engine stopped.
    ///
    /// A render of the layer's own content still in flight is not applied over the frame; setting the content
    /// again (a placeholder after a failure) renders and shows it as usual.
    public func showExternalSurface(_ surface: LayerSurface, on layer: Layer, shown: ((Bool) -> Void)? = nil) {
        guard state == .running, layer.host === self else {
            shown?(false)
            return
        }
        layer.shownGeneration = layer.sentinel.value &+ 1
        layer.renderedSurface = surface
        needsComposite = true
        let id = ObjectIdentifier(layer)
        if let previous = externalFrames.removeValue(forKey: id) { previous.shown?(false) }
        externalFrames[id] = ExternalFrame(layer: layer, shown: shown)
    }

    /// A present went out: every external frame composed into it reached the screen.
    func externalFramesPresented() {
        guard !externalFrames.isEmpty else { return }
        let frames = externalFrames
        externalFrames.removeAll()
        for frame in frames.values { frame.shown?(frame.layer?.host === self) }
    }

    /// The engine stopped: no waiting frame will be shown.
    func externalFramesDiscarded() {
        let frames = externalFrames
        externalFrames.removeAll()
        for frame in frames.values { frame.shown?(false) }
    }
}

/// An external surface applied to a layer and not yet presented. Main thread.
struct ExternalFrame {
    weak var layer: Layer?
    let shown: ((Bool) -> Void)?
}
