import CDRM
import KioskCore
import Logging

/// Captures what an output's CRTC produces, through a writeback connector, for the frames asked for: the next
/// present (`captureNextPresent`), the n-th present since `start` (`capturePresent(number:)`), or a present of its
/// own (`presentCapturing`). It rides along on the backend's atomic commits as its `DRMCommitHook`, so whoever
/// presents (the layer engine, a test) needs to know nothing about it.
///
/// At each atomic modeset it probes with TEST_ONLY whether the writeback connector can share the CRTC with the
/// display connector (cloned encoders), and routes it there if so. When it cannot (vkms in 6.1, many SoCs), a
/// capture frame routes the CRTC to the writeback connector alone, and the next present puts the display back.
///
/// Lives on the main thread with its backend, which holds it from `init` on.
public final class WritebackCapturer: DRMCommitHook {
    public let connector: WritebackConnector
    private weak var backend: DRMBackend?
    private let logger = Logger(label: "kioskd.drm")
    private let outputName: String
    /// The writeback connector shares the CRTC with the display connector (decided at each modeset).
    private var cloned = false
    /// A capture frame took the display connector off the CRTC; the next present puts it back.
    private var displayDetached = false
    private var captureRequested = false
    private var captureAtPresent: Int?
    /// The capture added to the flip being built, until the flip is committed or refused.
    private var building: WritebackCapture?
    /// `captureNextPresent(then:)` requests waiting for the next capturing present, and those the flip being
    /// built carries.
    private var captureWaiters: [(WritebackCapture?) -> Void] = []
    private var buildingWaiters: [(WritebackCapture?) -> Void] = []
    /// Presents since `start`; the n-th present is the frame the n-th flip event shows.
    public private(set) var presentCount = 0
    /// The capture made by the last capturing present.
    public private(set) var lastCapture: WritebackCapture?
    /// Called with each capture once the flip carrying it has been committed (its out-fence signals when the
    /// frame has been written).
    public var onCapture: ((WritebackCapture) -> Void)?

    /// Finds a writeback connector that can reach the backend's CRTC and attaches to the backend's commits. Before
    /// `start`, since the connector is routed at modeset.
    ///
    /// - Throws: `OutputError` when the backend does not use atomic commits, is already started or already has
    ///   a hook, or the card has no writeback connector for its CRTC.
    public init(backend: DRMBackend) throws {
        let name = backend.info.connector
        guard backend.commit.carriesHooks else {
            throw OutputError("connector \(name): writeback capture needs atomic modesetting (--commit atomic)")
        }
        guard !backend.isStarted else {
            throw OutputError("connector \(name): writeback capture must be attached before start (it is routed at modeset)")
        }
        guard !backend.commitHooks.contains(where: { $0 is WritebackCapturer }) else {
            throw OutputError("connector \(name): a writeback capturer is already attached")
        }
        let res = try DRMResources(card: backend.card)
        self.connector = try WritebackConnector.find(in: res, card: backend.card, crtc: backend.plan.crtc,
                                                     size: backend.plan.mode.mode.size)
        self.outputName = name
        self.backend = backend
        backend.commitHooks.append(self)
    }

    /// Makes the next `present` (whoever calls it: the layer engine, a test) also capture the frame; the result
    /// lands in `lastCapture`.
    public func captureNextPresent() throws {
        try requireAtomic()
        captureRequested = true
    }

    /// Makes the next `present` capture the frame, as `captureNextPresent()`, and calls `completion` on the main
    /// thread once the flip carrying the capture has been committed (its out-fence signals when the frame has been
    /// written), or with nil when that flip was refused.
    public func captureNextPresent(then completion: @escaping (WritebackCapture?) -> Void) throws {
        try requireAtomic()
        captureRequested = true
        captureWaiters.append(completion)
    }

    /// Lets go of `capture` once its frame has been written (its out-fence signalled) and read: its dumb buffer is a
    /// whole frame (8 MB at 1920x1080), which a scanout check every few minutes should not hold in between.
    public func forget(_ capture: WritebackCapture) {
        if lastCapture === capture, capture.waitForFence(timeoutMs: 0) { lastCapture = nil }
    }

    /// Captures the `number`-th present since `start` (1-based), the frame the `number`-th flip puts on screen.
    /// Counting presents rather than reacting to a flip keeps the choice exact whoever presents and whenever.
    public func capturePresent(number: Int) throws {
        try requireAtomic()
        captureAtPresent = number
    }

    /// Presents `buffer` on the backend and captures the frame the CRTC produces for it.
    public func presentCapturing(_ buffer: PixelBuffer, damage: [Rect]? = nil) throws -> WritebackCapture {
        let backend = try requireAtomic()
        let before = lastCapture
        captureRequested = true
        do { try backend.present(buffer, damage: damage) } catch {
            captureRequested = false
            throw error
        }
        guard let capture = lastCapture, capture !== before else {
            throw OutputError("connector \(outputName): the present was not captured")
        }
        return capture
    }

    @discardableResult
    private func requireAtomic() throws -> DRMBackend {
        guard let backend else { throw OutputError("connector \(outputName): writeback capture: the output is gone") }
        guard backend.commit.carriesHooks else {
            throw OutputError("connector \(outputName): writeback capture needs atomic commits; the output fell back to legacy")
        }
        return backend
    }

    /// A capture completes after its frame has been latched; a commit that takes the writeback connector off the
    /// CRTC before then would drop the job and its fence would never signal. Captures are diagnostics, so waiting
    /// for the fence (normally already signalled) is the simple, safe choice.
    private func waitForCaptureBeforeDetaching() {
        if let pending = lastCapture, displayDetached, !pending.waitForFence(timeoutMs: 250) {
            logger.warning("connector \(connector.name): writeback capture still running; committing anyway")
        }
    }

    // MARK: DRMCommitHook

    func modesetting(_ request: AtomicRequest, buffer: DumbBuffer, modeBlobID: UInt32, backend: DRMBackend) throws {
        let crtc = backend.plan.crtc.id
        waitForCaptureBeforeDetaching()
        let probe = try backend.modesetRequest(buffer: buffer, modeBlobID: modeBlobID)
        connector.attach(to: probe, crtc: crtc)
        cloned = backend.acceptsModeset(probe)
        if cloned {
            connector.attach(to: request, crtc: crtc)
        } else {
            // The modeset routes the display connector; a capture frame may have left the writeback one on.
            connector.detach(from: request)
            logger.debug("connector \(connector.name) cannot share CRTC \(crtc) with \(backend.plan.connector.name); capture frames route the CRTC to \(connector.name) alone")
        }
        displayDetached = false
    }

    func flipping(_ request: AtomicRequest, backend: DRMBackend) throws -> UInt32 {
        let wanted = captureRequested || presentCount + 1 == captureAtPresent
        captureRequested = false
        waitForCaptureBeforeDetaching()
        let display = backend.plan.connector, crtc = backend.plan.crtc.id
        let displayCRTC = backend.connectorProps["CRTC_ID"]?.id
        var flags: UInt32 = 0
        if wanted {
            let capture = try WritebackCapture(connector: connector, card: backend.card, size: backend.info.mode.size)
            if !cloned {
                request.add(display.id, displayCRTC, 0, what: "connector \(display.name) CRTC_ID")
                connector.attach(to: request, crtc: crtc)
                flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET)
            }
            capture.addToRequest(request)
            building = capture
            buildingWaiters = captureWaiters
            captureWaiters = []
        } else if displayDetached {
            request.add(display.id, displayCRTC, UInt64(crtc), what: "connector \(display.name) CRTC_ID")
            connector.detach(from: request)
            flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET)
        }
        return flags
    }

    func flipCommitted(_ committed: Bool) {
        let waiters = buildingWaiters
        buildingWaiters = []
        defer { building = nil }
        guard committed else {
            for waiter in waiters { waiter(nil) }
            return
        }
        presentCount += 1
        if !cloned { displayDetached = building != nil }
        if let building {
            lastCapture = building
            onCapture?(building)
            for waiter in waiters { waiter(building) }
        }
    }

    func turningOff(_ request: AtomicRequest) {
        waitForPendingCapture()
        connector.detach(from: request)
    }

    func restoring(_ request: AtomicRequest) {
        waitForPendingCapture()
    }

    /// A capture whose frame is still being written when the CRTC is turned off or given back is dropped, and vkms
    /// (6.1) then leaves its job at the head of the writeback queue: every later capture on the card would complete
    /// the stale job instead of its own. So stopping waits for it (normally already done).
    private func waitForPendingCapture() {
        if let pending = lastCapture, !pending.waitForFence(timeoutMs: 250) {
            logger.warning("connector \(connector.name): writeback capture still running at stop; turning off anyway")
        }
    }
}
