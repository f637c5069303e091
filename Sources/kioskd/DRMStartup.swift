import Glibc
import KioskCore
import KioskDisplay
import Logging

/// Opens the DRM output, waiting while another process holds DRM master: a kiosk started before the compositor
/// or console it replaces has let go takes the display as soon as it is free. One log line says it waits, one that
/// it took the display; SIGTERM or SIGINT while waiting ends the run. Runs on the main thread before the loop
/// starts (those signals are blocked for the loop's signalfd, so they are waited for here with sigtimedwait).
enum DRMStartup {
    /// How often opening is tried again while another process holds master.
    static let retryInterval = Duration.milliseconds(200)

    /// The backend, or nil when a stop signal came while waiting.
    static func open(_ options: DRMOptions, logger: Logger) throws -> DRMBackend? {
        var waitingSince: MonotonicInstant?
        while true {
            do {
                let backend = try DRMBackend(options: options)
                if let since = waitingSince {
                    logger.notice("device \(backend.card.path): DRM master is free; taking the display after \(Int((MonotonicInstant.now() - since).milliseconds)) ms")
                }
                return backend
            } catch let error as DRMMasterHeldError {
                if waitingSince == nil {
                    waitingSince = MonotonicInstant.now()
                    logger.warning("\(error); waiting for DRM master to be released")
                }
            }
            if let signal = waitForStopSignal(timeout: retryInterval) {
                logger.notice("\(signal == SIGTERM ? "SIGTERM" : "SIGINT") while waiting for DRM master: not starting")
                return nil
            }
        }
    }

    /// Waits up to `timeout` for SIGTERM or SIGINT; returns the one that came, consuming it.
    private static func waitForStopSignal(timeout: Duration) -> Int32? {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        let ns = timeout.nanosecondsClamped
        var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        let signal = sigtimedwait(&set, nil, &ts)
        return signal > 0 ? signal : nil
    }
}
