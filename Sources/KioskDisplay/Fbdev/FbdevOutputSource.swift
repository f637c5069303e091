import KioskCore

/// A Linux framebuffer device as an `OutputSource`: one connector (the driver's name), always connected, in the
/// mode the device is set to. A kiosk on `--backend fbdev` drives its one output through it, as it drives a DRM or
/// headless output. The device is opened by the first probe (its mode is read from it) and that backend is the one
/// the first open hands over. Main thread.
public final class FbdevOutputSource: OutputSource {
    public let path: String
    public let bufferCount: Int
    /// Opened by a probe and not handed over yet.
    private var opened: FbdevBackend?
    /// The output the device gives, once a probe has opened it.
    private var candidate: OutputCandidate?

    public init(path: String, bufferCount: Int = 2) {
        self.path = path
        self.bufferCount = bufferCount
    }

    /// - Throws: `OutputError` naming the device when it cannot be opened (`FbdevBackend.init`).
    public func probe() throws -> OutputProbe {
        if candidate == nil {
            let backend = try FbdevBackend(path: path, bufferCount: bufferCount)
            opened = backend
            candidate = OutputCandidate(device: path, connector: backend.info.connector, mode: backend.info.mode)
        }
        let choice = candidate!
        return OutputProbe(connectors: [ConnectorStatus(device: path, name: choice.connector, isConnected: true, preferredMode: choice.mode)],
                           choice: choice)
    }

    public func open(_ candidate: OutputCandidate) throws -> any DisplayBackend {
        if let backend = opened {
            opened = nil
            return backend
        }
        return try FbdevBackend(path: path, bufferCount: bufferCount)
    }
}
