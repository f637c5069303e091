import KioskCore

/// How a frame path that cannot go on ends kioskd: the engine's `FatalFrameError` (device gone, flips that keep
/// timing out, nothing left to fall back to) stops the loop at once, and the run ends with the error's message and
/// a non-zero exit status, so the service manager restarts kioskd. Listens to every output's engine for as long as
/// it lives: keep it until the run's outcome is read. Main thread.
final class FatalFrameExit {
    /// The message that becomes the run's failure: the last fatal error's, nil while there was none.
    private(set) var failure: String?
    private var listeners: [ListenerToken] = []

    init(engines: [LayerEngine], loop: MainLoop) {
        listeners = engines.map { engine in
            engine.addFatalListener { [unowned self] error in
                failure = "\(error.message) (\(error.code.rawValue))"
                loop.stop()
            }
        }
    }
}
