import Glibc
import KioskCore
import Logging

/// systemd's watchdog (`WatchdogSec=`): when `WATCHDOG_USEC` is set for this process (sd_watchdog_enabled(3)),
/// a timer on the main loop asks `health` (the engine's `FrameHealth`, the one answer to "is the frame path
/// healthy?") every half period and sends `WATCHDOG=1` only when the frame path is
/// healthy. A hung loop sends nothing because its timers do not run; a loop that turns while flips stall sends
/// nothing because `health` says so. Either way systemd restarts kioskd once the period passes.
///
/// Lives on the main thread; `health` is called there.
public final class ServiceWatchdog {
    /// Half of `WATCHDOG_USEC`: how often health is checked and a ping sent.
    public let interval: Duration
    /// Pings sent, and checks that found the frame path unhealthy (skipped pings).
    public private(set) var pings = 0
    public private(set) var skipped = 0
    private var timer: TimerHandle?
    private var wasHealthy = true
    private let logger = Logger(label: "kioskd.watchdog")

    /// Starts pinging, or returns nil when systemd asked for no watchdog (or asked another process).
    public init?(loop: MainLoop, notifier: ServiceNotifier, health: @escaping () -> FrameHealth) {
        guard let period = Self.period() else { return nil }
        interval = period / 2
        logger.info("systemd watchdog every \(period); pinging every \(interval) while the frame path is healthy")
        timer = loop.addTimer(after: .zero, repeating: interval) { [unowned self, notifier] in
            let state = health()
            if state.isHealthy {
                if !wasHealthy { logger.notice("frame path healthy again; watchdog pings resume") }
                pings += 1
                notifier.watchdogPing()
            } else {
                if wasHealthy { logger.error("frame path unhealthy: \(state.reason); watchdog pings stop") }
                skipped += 1
            }
            wasHealthy = state.isHealthy
        }
    }

    deinit { timer?.cancel() }

    /// The period from `WATCHDOG_USEC` when it is meant for this process (`WATCHDOG_PID` unset or ours).
    static func period() -> Duration? {
        do {
            guard let microseconds = try SystemdProtocol.watchdogMicroseconds() else { return nil }
            return .microseconds(Int64(clamping: microseconds))
        } catch {
            Logger(label: "kioskd.watchdog").warning("\(error); no watchdog")
            return nil
        }
    }
}
