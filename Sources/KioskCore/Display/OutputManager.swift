import Logging

private let logger = Logger(label: "kioskd.outputs")

/// Keeps the engine's output in step with what is connected. Each `rescan` (at start, and on every hotplug event
/// the udev monitor hears) probes the source and compares its choice with the output attached: the same connector
/// in the same mode changes nothing; otherwise the attached output is detached (its backend stopped and released)
/// and the chosen one, if any, opened, given a compositor for its mode and attached, so the scene is laid out for
/// that mode and drawn in full. With nothing connected, kioskd waits: one line says so when waiting starts, and
/// nothing is logged or armed while it lasts.
///
/// A configuration the kernel refuses in every form of the output's mode size (EINVAL or ENOSPC at commit, the
/// backend's same-size fallbacks exhausted) falls back to the connector's preferred mode of another size: the engine
/// asks (`LayerEngine.onFallbackExhausted`), and at the next loop turn the output is opened again in that mode,
/// with new scanout buffers and a compositor of its size, and the scene is laid out for it. The display keeps that
/// mode while it stays connected, so later hotplug events do not try the refused mode again.
///
/// The model holds several outputs' worth of state per output (backend, compositor, mode); the engine drives one
/// output, the first connected, so `OutputManager` manages one.
///
/// Lives on the main thread with the engine.
public final class OutputManager {
    public let engine: LayerEngine
    private let source: any OutputSource
    private let makeCompositor: (OutputMode) throws -> any Compositing
    /// Every connector of the last probe, connected or not (for `output.info` and `stats`).
    public private(set) var connectors: [ConnectorStatus] = []
    /// The output attached now, as probed.
    public private(set) var current: OutputCandidate?
    /// Called after each change of the output, for `display` events and the service's status.
    public var onEvent: ((OutputEvent) -> Void)?
    /// Called right after the output is detached, before another is opened: whatever holds on to the old output
    /// (a cursor plane, overlay plane buffers) lets go of it here, so its card is closed and DRM master released.
    public var onDetached: (() -> Void)?
    /// Called with each output opened, before it is started: what rides along on its commits (writeback capture)
    /// is set up here. A throw leaves the output unused, as a failed open does.
    public var prepareOutput: ((any DisplayBackend) throws -> Void)?
    /// The output whose mode the kernel refused, and the mode it is driven in instead while it stays connected.
    public private(set) var modeFallback: (refused: OutputCandidate, mode: OutputMode)?
    /// Probes so far, and the outputs attached and detached (telemetry, and what lifecycle tests count).
    public private(set) var probes = 0
    public private(set) var attaches = 0
    public private(set) var detaches = 0
    /// The last probe or open failure logged: the same one again is logged at debug, so a device stuck in a bad
    /// state cannot fill the journal one hotplug at a time.
    private var lastFailure: String?
    /// How often an output whose open found it busy (`OutputBusyError`: DRM master held elsewhere) is opened again.
    public static let busyRetryInterval = Duration.milliseconds(200)
    /// While the chosen output is busy: the timer that probes and opens again, and since when it has been busy.
    private var busyRetry: TimerHandle?
    private var busySince: MonotonicInstant?
    /// What the busy open waits for (`OutputBusyError.heldResource`).
    private var busyResource = ""

    /// - Parameters:
    ///   - attached: the output the engine was made with, as the first probe chose it (nil: none yet).
    ///   - makeCompositor: a compositor for a mode (the shadow compositor with the output rotation).
    public init(engine: LayerEngine, source: any OutputSource, attached: OutputCandidate?,
                makeCompositor: @escaping (OutputMode) throws -> any Compositing) {
        self.engine = engine
        self.source = source
        self.makeCompositor = makeCompositor
        current = engine.hasOutput ? attached : nil
        engine.onFallbackExhausted = { [weak self] failure in self?.fallBackToPreferredMode(after: failure) ?? false }
    }

    /// True while no display is attached.
    public var isWaiting: Bool { current == nil }

    /// Probes and brings the output in line with what is connected (see the type's documentation).
    public func rescan() {
        probes += 1
        busyRetry?.cancel()
        busyRetry = nil
        let probe: OutputProbe
        do {
            probe = try source.probe()
        } catch {
            note("\(error)")
            return
        }
        connectors = probe.connectors
        if probe.choice == nil, let reason = probe.connectors.lazy.compactMap(\.unavailableReason).first { note(reason) }
        var choice = probe.choice
        if let fallback = modeFallback {
            if choice == fallback.refused { choice?.mode = fallback.mode } else { modeFallback = nil }
        }
        guard choice != current else { return }
        let previous = current
        if let previous {
            engine.detachOutput()
            current = nil
            onDetached?()
            detaches += 1
            if choice?.connector != previous.connector || choice?.device != previous.device {
                logger.notice("\(previous.device) connector \(previous.connector): disconnected")
                onEvent?(.disconnected(connector: previous.connector))
            }
        }
        if let choice { adopt(choice, replacing: previous) }
        // Said once as the display goes; a display that cannot be opened has said why in `note` already.
        if current == nil, choice == nil { logger.notice("no display connected; waiting for one (the control socket is served)") }
    }

    /// Called once at start when nothing is connected: the one line that says kioskd waits.
    public func startWaiting() {
        logger.notice("no display connected; waiting for one (the control socket is served)")
    }

    private func adopt(_ choice: OutputCandidate, replacing previous: OutputCandidate?) {
        let backend: any DisplayBackend
        do {
            backend = try source.open(choice)
            try prepareOutput?(backend)
            try engine.attachOutput(backend: backend, compositor: makeCompositor(backend.info.mode))
        } catch let error as any OutputBusyError {
            // Not broken, just not ours yet: one line, then quiet attempts until it is free.
            if busySince == nil {
                busySince = engine.loop.now
                busyResource = error.heldResource
                logger.warning("\(choice): \(error); waiting for \(error.heldResource) to be released (trying again every \(Int(Self.busyRetryInterval.milliseconds)) ms)")
            }
            busyRetry = engine.loop.addTimer(after: Self.busyRetryInterval) { [weak self] in
                self?.busyRetry = nil
                self?.rescan()
            }
            return
        } catch {
            note("\(choice): cannot drive it: \(error)")
            return
        }
        if let since = busySince {
            logger.notice("\(choice): \(busyResource) is free; taking the display after \(Int((engine.loop.now - since).milliseconds)) ms")
            busySince = nil
        }
        current = choice
        attaches += 1
        lastFailure = nil
        if let previous, previous.device == choice.device, previous.connector == choice.connector {
            logger.notice("\(choice.device) connector \(choice.connector): mode \(previous.mode) changed to \(backend.info.mode)")
            onEvent?(.modeChanged(backend.info))
        } else {
            logger.notice("\(choice.device) connector \(choice.connector): connected, mode \(backend.info.mode); showing the scene")
            onEvent?(.connected(backend.info))
        }
    }

    /// The engine's answer to a configuration refused in every form of the mode's size: the connector's preferred
    /// mode, when it has another size, is used instead. Returns false (the fault stays fatal) when there is none, or
    /// when the output is in it already, so a refused preferred mode is never tried again.
    private func fallBackToPreferredMode(after failure: PresentFailure) -> Bool {
        guard let current,
              let status = connectors.first(where: { $0.device == current.device && $0.name == current.connector }),
              let preferred = status.preferredMode, preferred.size != current.mode.size else { return false }
        logger.warning("\(current.device) connector \(current.connector): \(failure.errnoName) at commit in every configuration of mode \(current.mode.exactDescription); falling back to the preferred mode \(preferred.exactDescription), another size: opening the output again and laying the scene out for it")
        modeFallback = (current, preferred)
        // Not from inside the present that failed: the output is let go at the next turn of the loop.
        _ = engine.loop.addTimer(after: .zero) { [weak self] in self?.reopen(in: preferred, after: failure) }
        return true
    }

    private func reopen(in mode: OutputMode, after failure: PresentFailure) {
        // Unplugged or replaced meanwhile: the hotplug's rescan decided already.
        guard let previous = current, modeFallback?.refused == previous else { return }
        engine.detachOutput()
        current = nil
        onDetached?()
        detaches += 1
        adopt(OutputCandidate(device: previous.device, connector: previous.connector, mode: mode), replacing: previous)
        if current == nil {
            engine.fail(FatalFrameError(code: .presentFailed, message: "\(failure.message); nothing of size \(previous.mode.size) is taken, and opening the output again in its preferred mode \(mode.exactDescription) failed"))
        }
    }

    private func note(_ failure: String) {
        if failure == lastFailure {
            logger.debug("\(failure)")
        } else {
            logger.error("\(failure)")
            lastFailure = failure
        }
    }
}
