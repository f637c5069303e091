import CDRM
import Glibc
import KioskCore
import Logging

/// Everything that selects and configures a DRM output.
public struct DRMOptions: Sendable {
    /// A card path, or nil for the first card with a connected connector.
    public var device: String?
    /// With no `device`: the first card whose kernel driver has this name (`vc4`, `vkms`).
    public var driver: String?
    public var connector: String?
    public var mode: ModeRequest?
    public var commit: CommitChoice = .auto
    public var bufferCount: Int = 2

    public init(device: String? = nil, driver: String? = nil, connector: String? = nil, mode: ModeRequest? = nil,
                commit: CommitChoice = .auto, bufferCount: Int = 2) {
        self.device = device; self.driver = driver; self.connector = connector; self.mode = mode; self.commit = commit
        self.bufferCount = bufferCount
    }
}

/// A DRM/KMS output: one connector on one CRTC with its primary plane, double- or triple-buffered with dumb
/// buffers, flipped on vblank. Every call whose form depends on the commit API goes through its `commit` interface
/// (`DRMAtomicCommit` or `DRMLegacyCommit`); the restore at stop is in `DRMRestore.swift`, power in `DRMPower.swift`,
/// master, device faults and the fallback in `DRMSession.swift`; `DRMCommitHook`s (writeback capture, overlay and
/// cursor planes) ride along on the commits of an interface that carries them.
///
/// Several backends may drive one card, one connector each: they share the open card and its `DRMCardSession`
/// (events, master), and each holds its connector, CRTC and primary plane (`claim`) so the others choose around them.
///
/// Lives on the main thread: it owns its KMS state and the buffers. Pending-flip state lives between a
/// successful `present` and the page-flip event for it.
public final class DRMBackend: DisplayBackend {
    private enum BufferState { case free, acquired, pending, front }

    public let card: DRMCard
    /// Its mode changes only when a refused configuration falls back to the preferred mode (`fallBack`).
    public internal(set) var plan: DRMOutputPlan
    /// The configurations still to try after a refused commit (`fallBack`); nil until the first refusal.
    var fallbackSteps: [OutputConfiguration]?
    /// How this output commits: atomic unless asked otherwise or the card has no atomic commits, and legacy after
    /// the kernel refused an atomic commit and the output fell back (`fallBack`).
    var commit: any DRMCommitInterface
    /// The API of `commit`.
    public var commitAPI: CommitAPI { commit.api }
    public internal(set) var info: OutputInfo
    /// Set by the engine: called when the device is gone (EPOLLHUP or EPOLLERR on the card's fd).
    public var onDeviceLost: ((OutputError) -> Void)?
    /// The plane takes FB_DAMAGE_CLIPS and the interface carries it, so presents can name what changed.
    public var supportsDamageClips: Bool { commit.carriesHooks && planeProps["FB_DAMAGE_CLIPS"] != nil }

    let logger = Logger(label: "kioskd.drm")
    private var buffers: [DumbBuffer] = []
    private var states: [BufferState] = []
    private var pendingIndex: Int?
    private var frontIndex: Int?
    var modeBlobID: UInt32 = 0
    private var onFlip: ((FlipEvent) -> Void)?
    /// This backend among the card's outputs; its page flips carry it as user data (`DRMCardSession`).
    /// Its member token in the card's session (page-flip user data, the owner of its claims).
    private(set) var token: UInt64 = 0
    /// The connector, CRTC and primary plane this output holds on its card.
    private(set) var claim: DRMClaim?
    let saved: DRMResources.CRTC
    let savedConnectorIDs: [UInt32]
    public private(set) var isStarted = false
    /// Add to every atomic modeset and page flip, in order, and hear whether each flip was committed (see
    /// `DRMCommitHook`): writeback capture, the cursor plane. Held strongly; a hook that routes at modeset is
    /// added before `start`.
    var commitHooks: [any DRMCommitHook] = []
    /// Paces flip events by vblank, or by a timer where the driver has none (`DRMVblankPacing.swift`); set by `start`.
    var pacer: FlipPacer?
    var loop: MainLoop?

    // Property ids, looked up once.
    let planeProps: DRMPropertyTable
    let crtcProps: DRMPropertyTable
    let connectorProps: DRMPropertyTable

    public var isFlipPending: Bool { pendingIndex != nil }
    public internal(set) var isPoweredOn = true

    /// Opens the device, takes master, picks connector, mode, CRTC and plane, and allocates the buffers. Nothing is
    /// shown until `start`.
    public init(options: DRMOptions) throws {
        guard (2...3).contains(options.bufferCount) else {
            throw OutputError("buffers \(options.bufferCount): must be 2 or 3")
        }
        let card = try Self.openCard(options.device, driver: options.driver, choosing: options.connector)
        try card.becomeMaster()
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let commit = try DRMCommit.open(options.commit, on: card)
        let api = commit.api
        let res = try DRMResources(card: card)
        let plan = try DRMOutputPlan.choose(in: res, device: card.path, connector: options.connector, mode: options.mode,
                                            taken: card.session.taken())

        self.card = card
        self.plan = plan
        self.commit = commit
        self.planeProps = plan.primaryPlane.properties
        self.crtcProps = plan.crtc.properties
        self.connectorProps = plan.connector.properties
        self.saved = plan.crtc
        self.savedConnectorIDs = res.connectors.filter { c in
            c.currentEncoderID.flatMap { res.encoder(id: $0)?.crtcID } == plan.crtc.id
        }.map(\.id)
        self.info = OutputInfo(device: card.path, driver: card.driver, connector: plan.connector.name,
                               mode: plan.mode.mode, commitAPI: api, bufferCount: options.bufferCount)
        for _ in 0..<options.bufferCount {
            let b = try DumbBuffer(card: card, size: plan.mode.mode.size)
            memset(b.base, 0, b.byteCount)
            buffers.append(b)
            states.append(.free)
        }
        token = card.session.join(self)
        claim = card.session.claim(DRMTakenObjects(connectors: [plan.connector.id: "connector \(plan.connector.name)"],
                                                   crtcs: [plan.crtc.id: "connector \(plan.connector.name)"],
                                                   planes: [plan.primaryPlane.id: "connector \(plan.connector.name)"]),
                                   owner: token)
        logger.info("\(card.path) (\(card.driver)): connector \(plan.connector.name), mode \(plan.mode.mode), CRTC \(plan.crtc.id), plane \(plan.primaryPlane.id), \(api.rawValue) commits, \(options.bufferCount) buffers")
    }

    deinit {
        if isStarted { stop() }
        if modeBlobID != 0 { drmModeDestroyPropertyBlob(card.fd, modeBlobID) }
        card.session.leave(token)
    }

    /// Resolves `--device`: a path, or the first card with a connected connector (one `connector` names, when it
    /// names one) that no other output on it drives. Cards are opened shared (`DRMCard.shared`). Errors list what
    /// exists.
    static func openCard(_ path: String?, driver: String? = nil, choosing connector: String? = nil) throws -> DRMCard {
        let paths = DRMCard.cardPaths()
        if let path {
            do { return try DRMCard.shared(path: path) } catch let error as OutputError {
                throw OutputError("\(error.message); available: \(paths.isEmpty ? "none (no /dev/dri/card*)" : paths.joined(separator: ", "))")
            }
        }
        var tried: [String] = []
        // A card with a connected display only other outputs drive, or none named `connector`: the choice on it
        // says why, when no card has one free.
        var busy: DRMCard?
        for p in paths {
            guard let card = try? DRMCard.shared(path: p) else { tried.append("\(p) (cannot open)"); continue }
            if let driver, card.driver != driver { tried.append("\(p) (driver \(card.driver))"); continue }
            card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
            let taken = card.session.taken()
            let connected = (try? DRMResources(card: card))?.connectors.filter { !$0.isWriteback && $0.status == .connected } ?? []
            if connected.contains(where: {
                taken.connectors[$0.id] == nil && (connector == nil || $0.name.lowercased() == connector!.lowercased())
            }) {
                return card
            }
            if connected.isEmpty { tried.append("\(p) (\(card.driver): nothing connected)") } else { busy = busy ?? card }
        }
        if let busy { return busy }
        let wanted = driver.map { "no DRM device with driver \($0) and a connected display" } ?? "no DRM device with a connected display"
        throw OutputError(paths.isEmpty ? "no DRM device: /dev/dri has no card nodes"
                                         : "\(wanted); checked: \(tried.joined(separator: ", "))")
    }

    // MARK: - Start

    public func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws {
        precondition(!isStarted, "DRMBackend.start called twice")
        self.onFlip = onFlip
        let first = 0
        try commit.modeset(self, buffer: buffers[first])
        states[first] = .front
        frontIndex = first
        isStarted = true
        self.loop = loop
        pacer = choosePacing(now: loop.now)
        try card.session.started(token, on: loop)
    }

    // MARK: - Buffers and flips

    public func acquireBuffer() -> PixelBuffer? {
        guard let i = states.firstIndex(of: .free) else { return nil }
        states[i] = .acquired
        let b = buffers[i]
        return PixelBuffer(index: i, base: b.base, size: b.size, stride: b.stride)
    }

    /// Gives an acquired buffer back without showing it.
    public func releaseBuffer(_ buffer: PixelBuffer) {
        if states[buffer.index] == .acquired { states[buffer.index] = .free }
    }

    public func present(_ buffer: PixelBuffer, damage: [Rect]?) throws {
        guard isStarted else { throw OutputError("connector \(info.connector): present before start") }
        guard pendingIndex == nil else { throw OutputError("connector \(info.connector): flip already pending") }
        // An inactive CRTC refuses page flips (EINVAL); say why instead.
        guard isPoweredOn else { throw OutputError("connector \(info.connector): present while the output is off") }
        guard buffers.indices.contains(buffer.index), states[buffer.index] == .acquired else {
            throw OutputError("connector \(info.connector): buffer \(buffer.index) was not acquired")
        }
        let fb = buffers[buffer.index]
        let userData = DRMCardSession.userData(for: token)
        try commit.flip(self, to: fb, damage: damage, userData: userData)
        states[buffer.index] = .pending
        pendingIndex = buffer.index
    }

    /// Forgets a pending flip whose event will never come (after a modeset that replaced it): its buffer is free.
    func forgetPendingFlip() {
        pacer?.forgetHeld()
        if let index = pendingIndex { states[index] = .free }
        pendingIndex = nil
    }

    /// The buffer on screen, to modeset with again.
    var frontBuffer: DumbBuffer { buffers[frontIndex ?? 0] }

    /// Reads the card's events: this output's page flips, and those of the card's other outputs, each to its own.
    func dispatchEvents() {
        card.session.dispatchEvents()
    }

    /// The CRTC's vblank counter (CRTC_GET_SEQUENCE); nil when the driver cannot say.
    public var vblankCounter: UInt64? {
        var sequence: UInt64 = 0
        var ns: UInt64 = 0
        guard drmCrtcGetSequence(card.fd, plan.crtc.id, &sequence, &ns) == 0 else { return nil }
        return sequence
    }

    /// Reads the card's events when some are waiting; never blocks.
    public func readPendingEvents() {
        var pfd = pollfd(fd: card.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 0) == 1, pfd.revents & Int16(POLLIN) != 0 else { return }
        dispatchEvents()
    }

    private var sequenceHigh: UInt64 = 0
    private var lastSequence32: UInt32?

    func flipCompleted(sequence: UInt32, timestamp: MonotonicInstant, crtcID: UInt32) {
        if crtcID != 0, crtcID != plan.crtc.id {
            logger.warning("connector \(info.connector): page-flip event names CRTC \(crtcID), not this output's CRTC \(plan.crtc.id)")
        }
        guard let index = pendingIndex, pacer?.isHolding != true else {
            logger.warning("connector \(info.connector): page-flip event with no flip pending (CRTC \(crtcID))")
            return
        }
        // The kernel's vblank counter is 32 bits in this event; extend it so gaps stay right across a wrap.
        if let last = lastSequence32, sequence < last { sequenceHigh += 1 << 32 }
        lastSequence32 = sequence
        pace(FlipEvent(sequence: sequenceHigh | UInt64(sequence), timestamp: timestamp, bufferIndex: index))
    }

    /// The flip's buffer is on screen as far as the engine is concerned: the vblank event, or its paced tick.
    func finishFlip(_ event: FlipEvent) {
        guard pendingIndex == event.bufferIndex else { return }
        if let f = frontIndex { states[f] = .free }
        states[event.bufferIndex] = .front
        frontIndex = event.bufferIndex
        pendingIndex = nil
        onFlip?(event)
    }

    public func frontBufferSnapshot() -> [UInt8]? {
        frontIndex.map { buffers[$0].readPixels() }
    }

    /// Blocks until the pending flip completes (or `timeoutMs` passes). Used at shutdown and by tests; the main
    /// loop never waits like this while running.
    @discardableResult
    public func waitForPendingFlip(timeoutMs: Int32 = 1000) -> Bool {
        // An absolute deadline: the card's other outputs' events wake the poll too, as often as they come.
        let deadline = MonotonicInstant.now() + .milliseconds(Int64(timeoutMs))
        while pendingIndex != nil {
            // The kernel's event came and waits for its timer tick: deliver it now.
            if pacer?.deliverHeldNow() == true { continue }
            let left = (deadline - MonotonicInstant.now()).milliseconds
            guard left > 0 else { break }
            var pfd = pollfd(fd: card.fd, events: Int16(POLLIN), revents: 0)
            let n = poll(&pfd, 1, Int32(left.rounded(.up)))
            if n > 0 { dispatchEvents() } else if n == 0 { break } else if errno != EINTR { break }
        }
        return pendingIndex == nil
    }

    // MARK: - Stop

    public func stop() {
        guard isStarted else { return }
        if !waitForPendingFlip() {
            logger.error("connector \(info.connector): flip did not complete within 1 s; restoring anyway")
        }
        if !isPoweredOn {
            // Restoring sets the CRTC's configuration but, under legacy, not the connector's DPMS state.
            do { try setPower(true) } catch { logger.error("\(error)") }
        }
        // Restored while master is held; the session gives master up once no output on the card runs.
        restore()
        card.session.stopped(token)
        isStarted = false
        onFlip = nil
        // The pacer stays: what it found out about the driver is still reported after the run (`flipPacing`).
        loop = nil
    }

}
