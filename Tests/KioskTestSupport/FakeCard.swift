import Glibc
import KioskCore
import KioskDisplay

/// A DRM card stand-in for the output lifecycle: the test plugs and unplugs displays on its connectors, and each
/// output opened is a headless backend whose buffers, presents and stops the card counts, so a test sees every
/// buffer and framebuffer an output ever had come back. Chooses like `DRMOutputSource`: the first connected
/// connector, the requested mode when the display offers it, else its preferred one.
///
/// Lives on the main thread, like the outputs it opens.
public final class FakeCard: OutputSource {
    public struct Connector {
        public var name: String
        public var isConnected: Bool
        /// The display's modes, the preferred one flagged.
        public var modes: [OutputMode]

        /// `modes` with the first one preferred.
        public init(name: String, isConnected: Bool, modes: [OutputMode]) {
            self.name = name
            self.isConnected = isConnected
            self.modes = FakeCard.preferringFirst(modes)
        }
    }

    public let device: String
    public var connectors: [Connector]
    /// The mode asked for (`--mode`, the board file); nil for the preferred one.
    public var requestedMode: ModeRequest?
    /// The next probe throws this, once.
    public var probeFailure: OutputError?
    /// Modes the simulated kernel refuses with EINVAL: every present of an output in one of them fails, and so does
    /// every fallback step (`fallBack`) to one of them.
    public var refusedModes: Set<OutputMode> = []
    /// The configurations the outputs' `fallBack` tried, in order, refused or not.
    public private(set) var fallbackAttempts: [OutputConfiguration] = []

    /// Outputs opened, and of those the ones stopped and the ones freed.
    public private(set) var opened = 0
    public private(set) var stopped = 0
    public private(set) var freed = 0
    /// Framebuffers (scanout buffers) of outputs not freed yet.
    public private(set) var liveFramebuffers = 0
    /// Buffers handed out to be drawn into and neither presented nor given back, over every output.
    public private(set) var buffersOut = 0
    public private(set) var presents = 0
    public private(set) var probes = 0

    public init(device: String = "/dev/dri/card-fake", connectors: [Connector]) {
        self.device = device
        self.connectors = connectors
    }

    /// One connector `Virtual-1`, connected with `modes` (the first preferred) or disconnected.
    public convenience init(connected: Bool, modes: [OutputMode] = [OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)]) {
        self.init(connectors: [Connector(name: "Virtual-1", isConnected: connected, modes: Self.preferringFirst(modes))])
    }

    /// Plugs a display offering `modes` (the first preferred) into `connector`.
    public func plug(_ connector: String = "Virtual-1", modes: [OutputMode]? = nil) {
        guard let i = connectors.firstIndex(where: { $0.name == connector }) else { return }
        connectors[i].isConnected = true
        if let modes { connectors[i].modes = Self.preferringFirst(modes) }
    }

    public func unplug(_ connector: String = "Virtual-1") {
        guard let i = connectors.firstIndex(where: { $0.name == connector }) else { return }
        connectors[i].isConnected = false
    }

    public var liveOutputs: Int { opened - freed }

    public func probe() throws -> OutputProbe { try probe(only: nil, requestedMode: requestedMode) }

    /// The source of one output slot: this card seen through one connector, under its own mode request.
    public func connectorSource(_ name: String, mode: ModeRequest? = nil) -> any OutputSource {
        FakeCardConnector(card: self, connector: name, requestedMode: mode)
    }

    /// Probes as `probe` does, choosing among `connector` alone when one is given.
    func probe(only name: String?, requestedMode: ModeRequest?) throws -> OutputProbe {
        probes += 1
        if let failure = probeFailure {
            probeFailure = nil
            throw failure
        }
        let statuses = connectors.map {
            ConnectorStatus(device: device, name: $0.name, isConnected: $0.isConnected, preferredMode: $0.modes.first { $0.isPreferred })
        }
        guard let connector = connectors.first(where: { $0.isConnected && (name == nil || $0.name == name) }),
              let mode = connector.modes.select(requestedMode) ?? connector.modes.select(nil) else {
            return OutputProbe(connectors: statuses, choice: nil)
        }
        return OutputProbe(connectors: statuses, choice: OutputCandidate(device: device, connector: connector.name, mode: mode))
    }

    /// Opens still to fail with `FakeCardBusyError`, as while another process holds DRM master.
    public var busyOpens = 0
    /// Opens that failed busy so far.
    public private(set) var busyRefusals = 0

    public func open(_ candidate: OutputCandidate) throws -> any DisplayBackend {
        if busyOpens > 0 {
            busyOpens -= 1
            busyRefusals += 1
            throw FakeCardBusyError(device: device)
        }
        guard connectors.contains(where: { $0.name == candidate.connector && $0.isConnected }) else {
            throw OutputError("connector \(candidate.connector) on \(device) is disconnected")
        }
        let modes = connectors.first { $0.name == candidate.connector }?.modes ?? [candidate.mode]
        let output = try FakeCardOutput(card: self, connector: candidate.connector, mode: candidate.mode, modes: modes)
        opened += 1
        liveFramebuffers += output.info.bufferCount
        return output
    }

    fileprivate func outputFreed(bufferCount: Int) {
        freed += 1
        liveFramebuffers -= bufferCount
    }

    fileprivate func outputStopped() { stopped += 1 }
    fileprivate func fallbackTried(_ step: OutputConfiguration) { fallbackAttempts.append(step) }
    fileprivate func bufferTaken() { buffersOut += 1 }
    fileprivate func bufferGivenBack(presented: Bool) {
        buffersOut -= 1
        if presented { presents += 1 }
    }

    fileprivate static func preferringFirst(_ modes: [OutputMode]) -> [OutputMode] {
        modes.enumerated().map { i, mode in
            var mode = mode
            mode.isPreferred = i == 0
            return mode
        }
    }
}

/// A `FakeCard` seen through one connector, with that output's mode request. Main thread.
/// The fake card's open refused for now, as `DRMMasterHeldError` is: busy, not broken. A plain value.
public struct FakeCardBusyError: OutputBusyError, CustomStringConvertible {
    public let device: String
    public var heldResource: String { "DRM master" }
    public var description: String { "device \(device): another process holds DRM master" }
}

final class FakeCardConnector: OutputSource {
    private let card: FakeCard
    let connector: String
    let requestedMode: ModeRequest?

    init(card: FakeCard, connector: String, requestedMode: ModeRequest?) {
        self.card = card
        self.connector = connector
        self.requestedMode = requestedMode
    }

    func probe() throws -> OutputProbe { try card.probe(only: connector, requestedMode: requestedMode) }
    func open(_ candidate: OutputCandidate) throws -> any DisplayBackend { try card.open(candidate) }
}

/// One output of a `FakeCard`: a headless backend that reports to its card, with atomic commits and the card's
/// refused modes standing in for the kernel's answers. Main thread.
final class FakeCardOutput: DisplayBackend {
    private let headless: HeadlessBackend
    private let card: FakeCard
    let connector: String
    /// The connector's modes when the output was opened, the preferred one flagged.
    private let modes: [OutputMode]
    private var configuration: OutputConfiguration
    private var fallbackSteps: [OutputConfiguration]?
    var onDeviceLost: ((OutputError) -> Void)?

    init(card: FakeCard, connector: String, mode: OutputMode, modes: [OutputMode]) throws {
        headless = try HeadlessBackend(mode: mode)
        self.card = card
        self.connector = connector
        self.modes = modes
        configuration = OutputConfiguration(.atomic, mode)
    }

    deinit { card.outputFreed(bufferCount: headless.info.bufferCount) }

    var info: OutputInfo {
        var info = headless.info
        info.device = card.device
        info.driver = "fake"
        info.connector = connector
        info.commitAPI = configuration.commitAPI
        info.mode = configuration.mode
        return info
    }
    var isFlipPending: Bool { headless.isFlipPending }
    var isPoweredOn: Bool { headless.isPoweredOn }

    func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws { try headless.start(on: loop, onFlip: onFlip) }

    func acquireBuffer() -> PixelBuffer? {
        guard let buffer = headless.acquireBuffer() else { return nil }
        card.bufferTaken()
        return buffer
    }

    func present(_ buffer: PixelBuffer, damage: [Rect]?) throws {
        if card.refusedModes.contains(configuration.mode) {
            throw OutputError("connector \(connector): \(configuration.commitAPI.rawValue) page flip failed: \(errnoDescription(EINVAL))", errno: EINVAL)
        }
        try headless.present(buffer, damage: damage)
        card.bufferGivenBack(presented: true)
    }

    func releaseBuffer(_ buffer: PixelBuffer) {
        headless.releaseBuffer(buffer)
        card.bufferGivenBack(presented: false)
    }

    func reacquire() throws { try headless.reacquire() }
    /// Walks `ConfigurationFallback` as the DRM backend does; a step in a refused mode is refused. The size stays.
    func fallBack(after failure: PresentFailure) throws -> String {
        if fallbackSteps == nil {
            fallbackSteps = ConfigurationFallback(from: configuration, modes: modes, atomicAvailable: true).steps
        }
        while let step = fallbackSteps?.first {
            fallbackSteps?.removeFirst()
            card.fallbackTried(step)
            if card.refusedModes.contains(step.mode) || step.mode.size != configuration.mode.size { continue }
            configuration = step
            return step.description
        }
        throw OutputError("connector \(connector): \(failure.errnoName) at commit with \(configuration); nothing left to fall back to",
                           errno: failure.errno)
    }
    func frontBufferSnapshot() -> [UInt8]? { headless.frontBufferSnapshot() }

    func stop() {
        headless.stop()
        card.outputStopped()
    }

    func setPower(_ on: Bool) throws { try headless.setPower(on) }
}
