import KioskCore

/// How a frame path that cannot go on ends kioskd: the engine's `FatalFrameError` (device gone, flips that keep
/// timing out, nothing left to fall back to) stops the loop at once, and the run ends with the error's message and
/// a non-zero exit status, so the service manager restarts kioskd. Main thread.
enum FatalFrameExit {
    /// `record` receives the message that becomes the run's failure.
    static func install(on engine: LayerEngine, loop: MainLoop, record: @escaping (String) -> Void) {
        engine.onFatal = { error in
            record("\(error.message) (\(error.code.rawValue))")
            loop.stop()
        }
    }
}
