import Foundation
import KioskCore
import KioskService
import Logging

/// kioskd under systemd: READY=1 at the first complete frame, a STATUS line kept current, RELOADING=1 … READY=1
/// around SIGHUP, STOPPING=1 on SIGTERM, and watchdog pings while the frame path is healthy. Outside systemd it
/// arms no timer. Lives on the main thread.
final class ServiceWiring {
    let notifier = ServiceNotifier()
    private let loop: MainLoop
    private var watchdog: ServiceWatchdog?
    private var statusTimer: TimerHandle?
    /// The scene and page shown, fps and missed vblanks, for STATUS; set by `attach`.
    private var describe: () -> String = { "starting" }
    /// SIGTERM/SIGINT, for STOPPING=1.
    private var stopListener: ListenerToken?
    /// SIGHUP: RELOADING=1 … READY=1 around the scenes' reloads (`attach`), or a start over (`startOverOnReload`).
    private var reloadListener: ListenerToken?

    /// The sockets systemd passed, kept to be passed on when kioskd starts over (`StartOver`).
    let activation: SocketActivation
    /// The control socket systemd passed (kioskd.socket, `FileDescriptorName=control`), if any.
    var controlSocketFD: Int32? { activation.socket(named: "control") }

    init(loop: MainLoop) throws {
        self.loop = loop
        activation = try SocketActivation.fromEnvironment()
    }

    /// Wires notify and the watchdog to the running outputs. `health` says whether the frame path is healthy; by
    /// default, every output's (`KioskOutputs.health`): each loop turned within a second and no flip is overdue. The
    /// status line speaks of the first output's scene.
    func attach(outputs: KioskOutputs, session: RunSession, signals: SignalRouting,
                health: (() -> FrameHealth)? = nil) {
        let runner = outputs.first.runner, engine = runner.engine
        var previous = (flips: 0, at: loop.now)
        describe = { [loop, unowned runner, unowned session] in
            let flips = session.flips
            let seconds = Double((loop.now - previous.at).nanosecondsClamped) / 1e9
            let fps = seconds > 0 ? Double(flips.framesFlipped - previous.flips) / seconds : 0
            previous = (flips.framesFlipped, loop.now)
            let waiting = runner.engine.hasOutput ? "" : "waiting for a display (nothing connected); "
            let what = waiting + (runner.showsDiagnosticPage
                ? "diagnostic page: \(runner.diagnosticStatus)"
                : "scene \(runner.stage.source) page \(runner.stage.currentPage)")
            return "\(what), \(String(format: "%.1f", fps)) fps, \(flips.missedVblanks) missed vblanks"
        }
        session.onFirstCompleteFrame = { [unowned self] in announceReady() }
        // Waiting for a display is a normal state: ready, with a status saying what it waits for.
        if !engine.hasOutput { announceReady() }
        watchdog = ServiceWatchdog(loop: loop, notifier: notifier, health: health ?? { [unowned outputs] in outputs.health })

        // The run session stops on its own listener; STOPPING=1 goes out from the same signal.
        stopListener = signals.addStopListener { [unowned self] in
            notifier.stopping(status: "stopping at the next frame boundary")
        }
        // Each output's runner reads its scene again on its own listener, off the loop: READY=1 goes out once every
        // new scene is installed, or rejected and the previous one kept.
        reloadListener = signals.addReloadListener { [unowned self, unowned runner] reload in
            notifier.reloading(status: "reloading \(runner.stage.source == "inline" ? runner.path : runner.stage.source)")
            reload.whenDone { [unowned self] accepted in
                notifier.ready(status: (accepted ? "" : "reload rejected, previous scene kept; ") + describe())
            }
        }
    }

    /// True once SIGHUP asked for a start over: the run ends at the next frame boundary, and `Kiosk.run` then
    /// starts kioskd over (`StartOver`) instead of ending.
    private(set) var startingOver = false

    /// SIGHUP while a configuration problem is shown: RELOADING=1, and the run stops at the next frame boundary
    /// (no flip left in flight for the new start to trip over), to start over in this process with the
    /// configuration read again; the new start sends READY=1 at its first complete frame. Replaces `attach`'s reload
    /// listener: no scene is read again (the runner showing the problem does not follow SIGHUP).
    func startOverOnReload(_ signals: SignalRouting, session: RunSession, logger: Logger) {
        reloadListener = signals.addReloadListener { [unowned self, unowned session] _ in
            guard !startingOver else { return }
            startingOver = true
            notifier.reloading(status: "reloading: starting over to read the configuration again")
            logger.notice("SIGHUP with a configuration problem shown: starting over to read the configuration again")
            session.requestStop()
        }
    }

    /// READY=1 with the status line; under systemd the status is then kept current every 2 s.
    private func announceReady() {
        notifier.ready(status: describe())
        // An idle kiosk wakes only for its own timers: the status line is kept current only for systemd.
        guard notifier.isSupervised, statusTimer == nil else { return }
        statusTimer = loop.addTimer(after: .seconds(2), repeating: .seconds(2)) { [unowned self] in
            notifier.status(describe())
        }
    }

    /// The output changed (adopted, unplugged, another mode): the status line says so at once.
    func outputChanged() {
        notifier.status(describe())
    }
}
