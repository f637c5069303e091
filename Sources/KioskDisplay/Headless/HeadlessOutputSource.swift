import KioskCore

/// One simulated display as an `OutputSource`: a connector of the given name that is always connected, in one
/// mode. `kioskd run --backend headless` with an `outputs:` section makes one per entry, so several outputs run
/// on the host exactly as they do on cards: a slot per connector, each adopted by its `OutputManager`.
///
/// Lives on the main thread.
public final class HeadlessOutputSource: OutputSource {
    public let connector: String
    public let mode: OutputMode
    public let bufferCount: Int

    public init(connector: String, mode: OutputMode, bufferCount: Int = 2) {
        self.connector = connector
        self.mode = mode
        self.bufferCount = bufferCount
    }

    public func probe() throws -> OutputProbe {
        OutputProbe(connectors: [ConnectorStatus(device: "headless", name: connector, isConnected: true, preferredMode: mode)],
                    choice: OutputCandidate(device: "headless", connector: connector, mode: mode))
    }

    public func open(_ candidate: OutputCandidate) throws -> any DisplayBackend {
        try HeadlessBackend(mode: candidate.mode, bufferCount: bufferCount, connector: candidate.connector)
    }
}
