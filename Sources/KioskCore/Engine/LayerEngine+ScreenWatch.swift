import Logging

private let logger = Logger(label: "kioskd.engine")

/// The frames on screen, watched (see `ScreenWatch`, `TileFingerprints`): each composition's fingerprint and whether
/// the scene had visible content travel with it to the present and, at its flip, to the screen; the scene tells the
/// engine what it expects to change (`expectChange(in:)`). A black or frozen screen becomes the health signal's
/// reason, unhealthy only for the problems in `screenHealth.restartOn`, and an `error` event when it starts. Main
/// thread, like the engine.
extension LayerEngine {
    /// What the health signal makes of black and frozen screens (config `health:`).
    public var screenHealth: ScreenHealthSettings {
        get { screenWatch.settings }
        set { screenWatch.settings = newValue; checkScreen() }
    }

    /// The fingerprint of the frame on screen (the last one flipped), nil before the first flip or while the
    /// output is dark. `flip` events and `stats` carry it.
    public var screenFingerprint: FrameFingerprint? { screenWatch.shown }

    /// Tiles the compositor hashed so far (an unchanged frame hashes none).
    var tilesHashed: Int { compositor?.tilesHashed ?? 0 }

    /// The scene changed something in `layer` that it expects to see on screen: a clock's seconds, a ticker's step,
    /// a video's frame. Counted only while `layer` shows (in the tree, not hidden, not transparent, on screen) and
    /// the output presents; the frame missing more than `screenHealth.frozenAfter` of them in a row is frozen.
    public func expectChange(in layer: Layer) {
        guard state == .running, presentsEnabled, !presentsHeldByFault, backend?.isPoweredOn == true,
              isShown(layer) else { return }
        screenWatch.expectedChange()
        checkScreen()
    }

    /// Whether `layer` can be seen: it and its ancestors up to the root are visible and not transparent, and the
    /// part of its frame its clipping ancestors leave (in the root's coordinates, ignoring transforms) meets the
    /// screen. Cheap (a walk up the tree); it does not look for opaque layers covering it.
    func isShown(_ layer: Layer) -> Bool {
        guard !layer.isHidden, layer.opacity > 0 else { return false }
        var visible = layer.frame
        var current = layer
        while current !== rootLayer {
            guard let parent = current.parent, !parent.isHidden, parent.opacity > 0 else { return false }
            if parent === rootLayer { break }
            // `visible` is in `parent`'s coordinates: cut it to the parent's bounds if it clips, then move it out.
            if parent.clipsToBounds { visible = visible.intersection(Rect(size: parent.frame.size)) }
            guard !visible.isEmpty else { return false }
            visible.x += parent.frame.x
            visible.y += parent.frame.y
            current = parent
        }
        return !visible.intersection(screen).isEmpty
    }

    /// Whether a composition of `items` shows content the scene drew: a layer surface with some opacity on
    /// screen. Solid colours and plain fills are the scene's background, which may cover the screen on purpose.
    static func hasVisibleContent(_ items: [CompositeItem], screen: Rect) -> Bool {
        items.contains { item in
            guard case .surface = item.source, item.opacity > 0 else { return false }
            return !item.visibleFrame.intersection(screen).isEmpty
        }
    }

    /// The presented frame reached the screen.
    func screenFlipped(_ frame: ShownFrame?) {
        guard let frame else { return }
        screenWatch.frameShown(frame.fingerprint, hasVisibleContent: frame.hasVisibleContent, at: loop.now)
        checkScreen()
    }

    /// A scanout verification (`ScanoutComparison`) finished: `mismatch` describes how the frame read back
    /// differed from the composed one, nil when it matched. A mismatch is the health signal's reason
    /// (`scanout_mismatch`, unhealthy when `screenHealth.restartOn` names it) until a verification matches.
    public func scanoutVerified(mismatch: String?) {
        screenWatch.scanoutVerified(mismatch: mismatch)
        checkScreen()
    }

    /// Calls `completion` on the main thread with a copy of the composed frame (the shadow buffer, XRGB8888 rows of
    /// the panel's size) that the next present carries, at that present's flip, and asks for that present at once
    /// (an unchanged frame is presented again). Whatever rides along on the same present (a writeback capture)
    /// sees the same frame. Nil when the engine is not running or the output went dark first.
    public func captureNextPresent(then completion: @escaping ([UInt8]?) -> Void) {
        guard state == .running, backend != nil, compositor != nil else {
            completion(nil)
            return
        }
        screenshots.waitForNextPresent(completion)
        setNeedsPresent()
    }

    /// Layers shown on planes of their own at the last composition: what the shadow buffer does not hold.
    public var layersOnPlanes: Int { planeLayout.count }

    /// Nothing is on screen to judge any more (the output went dark or was let go).
    func forgetScreen() {
        screenWatch.reset()
        presentedFrame = nil
        checkScreen()
    }

    /// Reports a screen problem once, when it starts (an `error` event, a log line), and arms a check for when a
    /// black screen becomes a problem.
    func checkScreen() {
        let problem = screenWatch.problem(at: loop.now)
        if problem?.problem != reportedScreenProblem {
            let previous = reportedScreenProblem
            reportedScreenProblem = problem?.problem
            if let problem {
                logger.warning("\(backend?.info.connector ?? "output"): \(problem.reason)")
                let code: FrameFault.Code = switch problem.problem {
                case .black: .screenBlack
                case .frozen: .screenFrozen
                case .scanoutMismatch: .scanoutMismatch
                }
                faultListeners.emit(FrameFault(code: code, message: problem.reason))
            } else {
                logger.info("\(backend?.info.connector ?? "output"): the screen is no longer \(previous?.rawValue ?? "")")
            }
        }
        blackCheck?.cancel()
        blackCheck = nil
        if problem == nil, let due = screenWatch.blackDue {
            blackCheck = loop.addTimer(at: due) { [weak self] in
                self?.blackCheck = nil
                self?.checkScreen()
            }
        }
    }

    /// The screen's problem as the health signal sees it, nil when there is none.
    var screenProblem: (problem: ScreenHealthSettings.Problem, reason: String)? { screenWatch.problem(at: loop.now) }
}

/// A composition's fingerprint and whether the scene had visible content in it, carried from composition to
/// present to flip.
struct ShownFrame {
    var fingerprint: FrameFingerprint
    var hasVisibleContent: Bool
}
