import Logging

private let logger = Logger(label: "kioskd.outputs")

/// Keeps the engine's output in step with what is connected. Each `rescan` (at start, and on every hotplug event
/// the udev monitor hears) probes the source and compares its choice with the output attached: the same connector
/// in the same mode changes nothing; otherwise the attached output is detached (its backend stopped and released)
/// and the chosen one, if any, opened, given a compositor for its mode and attached, so the scene is laid out for
/// that mode and drawn in full. With nothing connected, kioskd waits: one line says so when waiting starts, and
/// nothing is logged or armed while it lasts.
///
/// The model holds several outputs' worth of state per output (backend, compositor, mode); the engine drives one
/// output, the first connected, so `OutputManager` manages one.
///
/// Lives on the main thread with the engine.
public final class OutputManager {
    public let engine: LayerEngine
    private let source: any OutputSource
    private let makeCompositor: (DisplayMode) throws -> any Compositing
    /// Every connector of the last probe, connected or not (for `display.info` and `stats`).
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

    /// - Parameters:
    ///   - attached: the output the engine was made with, as the first probe chose it (nil: none yet).
    ///   - makeCompositor: a compositor for a mode (the shadow compositor with the output rotation).
    public init(engine: LayerEngine, source: any OutputSource, attached: OutputCandidate?,
                makeCompositor: @escaping (DisplayMode) throws -> any Compositing) {
        self.engine = engine
        self.source = source
        self.makeCompositor = makeCompositor
        current = engine.hasOutput ? attached : nil
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
        guard probe.choice != current else { return }
        let previous = current
        if let previous {
            engine.detachOutput()
            current = nil
            onDetached?()
            detaches += 1
            if probe.choice?.connector != previous.connector || probe.choice?.device != previous.device {
                logger.notice("\(previous.device) connector \(previous.connector): disconnected")
                onEvent?(.disconnected(connector: previous.connector))
            }
        }
        if let choice = probe.choice { adopt(choice, replacing: previous) }
        // Said once as the display goes; a display that cannot be opened has said why in `note` already.
        if current == nil, probe.choice == nil { logger.notice("no display connected; waiting for one (the control socket is served)") }
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
                logger.warning("\(choice): \(error); trying again every \(Int(Self.busyRetryInterval.milliseconds)) ms until it is free")
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
            logger.notice("\(choice): free now; taking the display after \(Int((engine.loop.now - since).milliseconds)) ms")
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

    private func note(_ failure: String) {
        if failure == lastFailure {
            logger.debug("\(failure)")
        } else {
            logger.error("\(failure)")
            lastFailure = failure
        }
    }
}
