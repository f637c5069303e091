/// One connector as a probe saw it. A plain value.
public struct ConnectorStatus: Sendable, Equatable {
    /// The card it is on (`/dev/dri/card0`).
    public var device: String
    /// `HDMI-A-1`, `Virtual-1`.
    public var name: String
    public var isConnected: Bool
    /// The connector's preferred mode (else its first), nil when it reports none.
    public var preferredMode: OutputMode?
    /// Why a connected connector cannot be driven now (another output on the card holds every CRTC it can use),
    /// nil when it can.
    public var unavailableReason: String?

    public init(device: String, name: String, isConnected: Bool, preferredMode: OutputMode? = nil,
                unavailableReason: String? = nil) {
        self.device = device; self.name = name; self.isConnected = isConnected; self.preferredMode = preferredMode
        self.unavailableReason = unavailableReason
    }
}

/// An open that failed because the output is busy for now, not broken: DRM master held by another process (a
/// compositor or console not yet gone). `OutputManager` opens it again on a short timer until it is free, rather
/// than waiting for the next hotplug, which may never come.
public protocol OutputBusyError: Error {
    /// What is held, for the log lines while the output waits for it (`DRM master`).
    var heldResource: String { get }
}

/// The output a probe would drive: which connector on which card, in which mode. Two probes that choose the same
/// value leave the output as it is; any difference means another output. A plain value.
public struct OutputCandidate: Sendable, Equatable, CustomStringConvertible {
    public var device: String
    public var connector: String
    public var mode: OutputMode

    public init(device: String, connector: String, mode: OutputMode) {
        self.device = device; self.connector = connector; self.mode = mode
    }

    public var description: String { "\(device) connector \(connector) \(mode.exactDescription)" }
}

/// What a probe found: every connector of the cards looked at, and the output to drive (nil when nothing usable is
/// connected). A plain value.
public struct OutputProbe: Sendable, Equatable {
    public var connectors: [ConnectorStatus]
    public var choice: OutputCandidate?

    public init(connectors: [ConnectorStatus], choice: OutputCandidate?) {
        self.connectors = connectors; self.choice = choice
    }
}

/// Where outputs come from: the DRM cards (`DRMOutputSource`), or a fake card in tests. Lives on the main thread.
public protocol OutputSource: AnyObject {
    /// Reads the connectors now and chooses the output to drive under the user's settings (connector, mode; a mode
    /// the display does not offer gives way to its preferred one). Throws only for a fault worth an error line
    /// (naming the device and errno), never for "nothing connected".
    func probe() throws -> OutputProbe
    /// Opens the output `candidate` names, not started yet. Throws naming the device and errno.
    func open(_ candidate: OutputCandidate) throws -> any DisplayBackend
}

/// A change of the output, as `display` events tell subscribers. A plain value.
public enum OutputEvent: Sendable, Equatable {
    /// A display was adopted and shows the scene.
    case connected(OutputInfo)
    /// The output's display went away; kioskd waits for one.
    case disconnected(connector: String)
    /// The same connector came back with another mode (another monitor); the scene was laid out for it.
    case modeChanged(OutputInfo)
}
