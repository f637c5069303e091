import Glibc
import KioskCore
import Logging

/// SIGTERM/SIGINT stop the run at a frame boundary, SIGHUP reloads the scene files, SIGUSR1/SIGUSR2 hand the display
/// over and take it back (`MasterHandover`), through the loop's signalfd. Each party that acts on a signal adds its
/// own listener (the run session stops, each output's scene runner reloads its scene and hands over its engine, the
/// service tells systemd), so with several outputs every one of them hears every signal.
/// Made before any other thread starts, so every thread inherits the blocked mask. Main thread.
final class SignalRouting {
    private let stopListeners = Listeners<Void>()
    private let reloadListeners = Listeners<SignalReload>()
    private let handoverListeners = Listeners<Int32>()

    /// The signals routed, which the loop blocks and reads from its signalfd.
    static let signals = [SIGTERM, SIGINT, SIGHUP] + MasterHandover.signals

    init(loop: MainLoop, logger: Logger) throws {
        try loop.onSignals(Self.signals) { [weak self] signal in
            guard let self else { return }
            if MasterHandover.signals.contains(signal) {
                handoverListeners.emit(signal)
            } else if signal == SIGHUP {
                logger.notice("SIGHUP: reloading the scene file")
                let reload = SignalReload()
                reloadListeners.emit(reload)
                reload.everyListenerHeard()
            } else {
                logger.notice("\(signal == SIGTERM ? "SIGTERM" : "SIGINT"): stopping at the next frame boundary")
                stopListeners.emit()
            }
        }
    }

    /// `listener` hears SIGTERM and SIGINT.
    func addStopListener(_ listener: @escaping () -> Void) -> ListenerToken {
        stopListeners.add { _ in listener() }
    }

    /// `listener` hears SIGHUP, with the reload it starts: a listener that reads something again joins it
    /// (`SignalReload.join`), so that whoever waits for the whole reload (`whenDone`) hears when every part is done.
    func addReloadListener(_ listener: @escaping (SignalReload) -> Void) -> ListenerToken {
        reloadListeners.add(listener)
    }

    /// `listener` hears SIGUSR1 (hand the display over) and SIGUSR2 (take it back), with the signal's number.
    func addHandoverListener(_ listener: @escaping (_ signal: Int32) -> Void) -> ListenerToken {
        handoverListeners.add(listener)
    }
}

/// One SIGHUP's reload as its listeners see it. Reading a scene again takes a while (off the loop), and there may be
/// several (one per output): each reload listener that reads one again calls `join` and, once its new version was
/// installed or rejected, the closure `join` returned. `whenDone` handlers (the service's READY=1) run once, after
/// every reload listener has heard the signal and every part joined is done, with whether all were accepted; with
/// nothing joined, as soon as every listener has heard it. Which listener was added first changes nothing.
///
/// Main thread, as the listeners are.
final class SignalReload {
    private var parts = 0
    private var allAccepted = true
    private var listenersHeard = false
    private var done: [(_ allAccepted: Bool) -> Void] = []

    /// A part of the reload begins; call what is returned once it ended, with whether its new version was accepted.
    /// Calls after the first are ignored.
    func join() -> (_ accepted: Bool) -> Void {
        parts += 1
        var ended = false
        return { [self] accepted in
            guard !ended else { return }
            ended = true
            parts -= 1
            allAccepted = allAccepted && accepted
            finishIfDone()
        }
    }

    /// `handler` runs once every part joined is done, with whether every part's new version was accepted.
    func whenDone(_ handler: @escaping (_ allAccepted: Bool) -> Void) {
        done.append(handler)
    }

    /// Every reload listener has run: no part can join any more.
    fileprivate func everyListenerHeard() {
        listenersHeard = true
        finishIfDone()
    }

    private func finishIfDone() {
        guard listenersHeard, parts == 0, !done.isEmpty else { return }
        let handlers = done
        done = []
        for handler in handlers { handler(allAccepted) }
    }
}
