import Glibc
import KioskCore
import Logging

/// SIGTERM/SIGINT stop the run at a frame boundary, SIGHUP reloads the scene file, SIGUSR1/SIGUSR2 hand the display
/// over and take it back (`MasterHandover`), through the loop's signalfd.
/// Made before any other thread starts, so every thread inherits the blocked mask. Main thread.
final class SignalRouting {
    var onStop: (() -> Void)?
    var onReload: (() -> Void)?
    var onHandover: ((Int32) -> Void)?

    init(loop: MainLoop, logger: Logger) throws {
        try loop.onSignals([SIGTERM, SIGINT, SIGHUP] + MasterHandover.signals) { [weak self] signal in
            if MasterHandover.signals.contains(signal) {
                self?.onHandover?(signal)
            } else if signal == SIGHUP {
                logger.notice("SIGHUP: reloading the scene file")
                self?.onReload?()
            } else {
                logger.notice("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): stopping at the next frame boundary")
                self?.onStop?()
            }
        }
    }
}
