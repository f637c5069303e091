import CDRM
import Glibc
import KioskCore
import Logging

/// How the user asked for the commit API.
public enum CommitChoice: String, Sendable, CaseIterable {
    case atomic, legacy, auto
}

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
    /// Route a writeback connector to the CRTC at modeset so frames can be captured (atomic only).
    public var enableWriteback = false

    public init(device: String? = nil, driver: String? = nil, connector: String? = nil, mode: ModeRequest? = nil,
                commit: CommitChoice = .auto, bufferCount: Int = 2, enableWriteback: Bool = false) {
        self.device = device; self.driver = driver; self.connector = connector; self.mode = mode; self.commit = commit
        self.bufferCount = bufferCount; self.enableWriteback = enableWriteback
    }
}

/// A DRM/KMS output: one connector on one CRTC with its primary plane, double- or triple-buffered with dumb
/// buffers, flipped on vblank with atomic commits or legacy SetCrtc + PageFlip.
///
/// Lives on the main thread: it owns the card, all KMS state and the buffers. Pending-flip state lives between a
/// successful `present` and the page-flip event for it.
public final class DRMBackend: DisplayBackend {
    private enum BufferState { case free, acquired, pending, front }

    public let card: DRMCard
    /// Its mode changes only when a refused configuration falls back to the preferred mode (`fallBack`).
    public internal(set) var plan: DRMOutputPlan
    /// The configurations still to try after a refused commit (`fallBack`); nil until the first refusal.
    var fallbackSteps: [OutputConfiguration]?
    /// Atomic unless the kernel refused an atomic commit and the output fell back to legacy (`fallBack`).
    public internal(set) var commitAPI: CommitAPI
    public internal(set) var info: OutputInfo
    /// Set by the engine: called when the device is gone (EPOLLHUP or EPOLLERR on the card's fd).
    public var onDeviceLost: ((DisplayError) -> Void)?
    /// The plane takes FB_DAMAGE_CLIPS, so presents can name what changed.
    public let supportsDamageClips: Bool

    let logger = Logger(label: "kioskd.drm")
    private var buffers: [DumbBuffer] = []
    private var states: [BufferState] = []
    private var pendingIndex: Int?
    private var frontIndex: Int?
    private var modeBlobID: UInt32 = 0
    private var onFlip: ((FlipEvent) -> Void)?
    var source: SourceHandle?
    private var saved: DRMResources.CRTC
    private var savedConnectorIDs: [UInt32]
    private var started = false
    private let writeback: WritebackConnector?
    /// The writeback connector can share the CRTC with the display connector (cloned encoders). When it cannot
    /// (vkms in 6.1, many SoCs), a capture frame routes the CRTC to the writeback connector alone.
    private var writebackCloned = false
    /// A capture frame took the display connector off the CRTC; the next present puts it back.
    private var displayDetached = false

    // Property ids, looked up once.
    private let planeProps: DRMPropertyTable
    let crtcProps: DRMPropertyTable
    let connectorProps: DRMPropertyTable

    public var isFlipPending: Bool { pendingIndex != nil }
    public var writebackAvailable: Bool { writeback != nil }
    public private(set) var isPoweredOn = true

    /// Opens the device, takes master, picks connector, mode, CRTC and plane, and allocates the buffers. Nothing is
    /// shown until `start`.
    public init(options: DRMOptions) throws {
        guard (2...3).contains(options.bufferCount) else {
            throw DisplayError("buffers \(options.bufferCount): must be 2 or 3")
        }
        let card = try Self.openCard(options.device, driver: options.driver)
        try card.becomeMaster()
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let api: CommitAPI
        switch options.commit {
        case .legacy: api = .legacy
        case .atomic:
            guard card.setClientCap(Int32(DRM_CLIENT_CAP_ATOMIC), 1) else {
                throw DisplayError("device \(card.path) (\(card.driver)): atomic modesetting not supported; use --commit legacy")
            }
            api = .atomic
        case .auto: api = card.setClientCap(Int32(DRM_CLIENT_CAP_ATOMIC), 1) ? .atomic : .legacy
        }
        if api == .atomic { card.setClientCap(Int32(DRM_CLIENT_CAP_WRITEBACK_CONNECTORS), 1) }
        let res = try DRMResources(card: card)
        let plan = try DRMOutputPlan.choose(in: res, device: card.path, connector: options.connector, mode: options.mode)

        self.card = card
        self.plan = plan
        self.commitAPI = api
        self.planeProps = plan.primaryPlane.properties
        self.crtcProps = plan.crtc.properties
        self.connectorProps = plan.connector.properties
        self.supportsDamageClips = api == .atomic && plan.primaryPlane.properties["FB_DAMAGE_CLIPS"] != nil
        self.saved = plan.crtc
        self.savedConnectorIDs = res.connectors.filter { c in
            c.currentEncoderID.flatMap { res.encoder(id: $0)?.crtcID } == plan.crtc.id
        }.map(\.id)
        if options.enableWriteback {
            guard api == .atomic else { throw DisplayError("writeback capture needs atomic modesetting (--commit atomic)") }
            self.writeback = try WritebackConnector.find(in: res, card: card, crtc: plan.crtc, size: plan.mode.mode.size)
        } else {
            self.writeback = nil
        }
        self.info = OutputInfo(device: card.path, driver: card.driver, connector: plan.connector.name,
                               mode: plan.mode.mode, commitAPI: api, bufferCount: options.bufferCount)
        for _ in 0..<options.bufferCount {
            let b = try DumbBuffer(card: card, size: plan.mode.mode.size)
            memset(b.base, 0, b.byteCount)
            buffers.append(b)
            states.append(.free)
        }
        logger.info("\(card.path) (\(card.driver)): connector \(plan.connector.name), mode \(plan.mode.mode), CRTC \(plan.crtc.id), plane \(plan.primaryPlane.id), \(api.rawValue) commits, \(options.bufferCount) buffers")
    }

    deinit {
        if started { stop() }
        if modeBlobID != 0 { drmModeDestroyPropertyBlob(card.fd, modeBlobID) }
    }

    /// Resolves `--device`: a path, or the first card with a connected connector. Errors list what exists.
    static func openCard(_ path: String?, driver: String? = nil) throws -> DRMCard {
        let paths = DRMCard.cardPaths()
        if let path {
            do { return try DRMCard(path: path) } catch let error as DisplayError {
                throw DisplayError("\(error.message); available: \(paths.isEmpty ? "none (no /dev/dri/card*)" : paths.joined(separator: ", "))")
            }
        }
        var tried: [String] = []
        for p in paths {
            guard let card = try? DRMCard(path: p) else { tried.append("\(p) (cannot open)"); continue }
            if let driver, card.driver != driver { tried.append("\(p) (driver \(card.driver))"); continue }
            card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
            if let res = try? DRMResources(card: card),
               res.connectors.contains(where: { !$0.isWriteback && $0.status == .connected }) {
                return card
            }
            tried.append("\(p) (\(card.driver): nothing connected)")
        }
        let wanted = driver.map { "no DRM device with driver \($0) and a connected display" } ?? "no DRM device with a connected display"
        throw DisplayError(paths.isEmpty ? "no DRM device: /dev/dri has no card nodes"
                                         : "\(wanted); checked: \(tried.joined(separator: ", "))")
    }

    // MARK: - Start

    public func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws {
        precondition(!started, "DRMBackend.start called twice")
        self.onFlip = onFlip
        let first = 0
        switch commitAPI {
        case .atomic: try modesetAtomic(buffer: buffers[first])
        case .legacy: try modesetLegacy(buffer: buffers[first])
        case .headless: preconditionFailure("DRM backend with headless commit API")
        }
        states[first] = .front
        frontIndex = first
        started = true
        source = try loop.addSource(fd: card.fd, events: .readable) { [weak self] events in self?.cardReady(events) }
    }

    func modesetAtomic(buffer: DumbBuffer) throws {
        var mode = plan.mode.raw
        // A modeset after master was regained or a flip timed out makes a new blob: the old one goes first.
        if modeBlobID != 0 { drmModeDestroyPropertyBlob(card.fd, modeBlobID) }
        modeBlobID = 0
        let rc = drmModeCreatePropertyBlob(card.fd, &mode, MemoryLayout<drmModeModeInfo>.size, &modeBlobID)
        guard rc == 0 else { throw DisplayError("CRTC \(plan.crtc.id): create MODE_ID blob failed: \(errnoDescription(-rc))", errno: -rc) }
        let req = try AtomicRequest()
        let conn = plan.connector, crtc = plan.crtc.id
        req.add(conn.id, connectorProps["CRTC_ID"]?.id, UInt64(crtc), what: "connector \(conn.name) CRTC_ID")
        req.add(crtc, crtcProps["MODE_ID"]?.id, UInt64(modeBlobID), what: "CRTC \(crtc) MODE_ID")
        req.add(crtc, crtcProps["ACTIVE"]?.id, 1, what: "CRTC \(crtc) ACTIVE")
        addPlane(req, buffer: buffer)
        // Overlay and cursor planes, and another CRTC on the connector, that a previous master left on.
        let stray = strayStateForModeset(buffer: buffer, modeBlobID: modeBlobID)
        if let (state, res) = stray { addTurningOff(state, from: res, to: req) }
        if let wb = writeback {
            let probe = try AtomicRequest()
            probe.add(conn.id, connectorProps["CRTC_ID"]?.id, UInt64(crtc), what: "connector \(conn.name) CRTC_ID")
            probe.add(crtc, crtcProps["MODE_ID"]?.id, UInt64(modeBlobID), what: "CRTC \(crtc) MODE_ID")
            probe.add(crtc, crtcProps["ACTIVE"]?.id, 1, what: "CRTC \(crtc) ACTIVE")
            addPlane(probe, buffer: buffer)
            wb.attach(to: probe, crtc: crtc)
            let flags = UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET) | UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
            if case .success = probe.commit(fd: card.fd, flags: flags, userData: nil) {
                writebackCloned = true
                wb.attach(to: req, crtc: crtc)
            } else {
                // Test-only failures are expected here; the fallback is a normal mode of operation.
                logger.debug("connector \(wb.name) cannot share CRTC \(crtc) with \(conn.name); capture frames route the CRTC to \(wb.name) alone")
            }
        }
        let result = req.commit(fd: card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil)
        if case .failure(let e) = result {
            throw DisplayError("connector \(conn.name): atomic modeset \(plan.mode.mode) failed: \(e.message)", errno: e.errno)
        }
        if let (state, _) = stray { logger.info("connector \(conn.name): turned off what a previous master left on: \(state.description)") }
    }

    func addPlane(_ req: AtomicRequest, buffer: DumbBuffer) {
        let p = plan.primaryPlane.id, crtc = plan.crtc.id
        let w = UInt64(buffer.size.width), h = UInt64(buffer.size.height)
        req.add(p, planeProps["FB_ID"]?.id, UInt64(buffer.framebufferID), what: "plane \(p) FB_ID")
        req.add(p, planeProps["CRTC_ID"]?.id, UInt64(crtc), what: "plane \(p) CRTC_ID")
        // Source coordinates are 16.16 fixed point.
        req.add(p, planeProps["SRC_X"]?.id, 0, what: "plane \(p) SRC_X")
        req.add(p, planeProps["SRC_Y"]?.id, 0, what: "plane \(p) SRC_Y")
        req.add(p, planeProps["SRC_W"]?.id, w << 16, what: "plane \(p) SRC_W")
        req.add(p, planeProps["SRC_H"]?.id, h << 16, what: "plane \(p) SRC_H")
        req.add(p, planeProps["CRTC_X"]?.id, 0, what: "plane \(p) CRTC_X")
        req.add(p, planeProps["CRTC_Y"]?.id, 0, what: "plane \(p) CRTC_Y")
        req.add(p, planeProps["CRTC_W"]?.id, w, what: "plane \(p) CRTC_W")
        req.add(p, planeProps["CRTC_H"]?.id, h, what: "plane \(p) CRTC_H")
    }

    func modesetLegacy(buffer: DumbBuffer) throws {
        var connectorID = plan.connector.id
        var mode = plan.mode.raw
        let rc = drmModeSetCrtc(card.fd, plan.crtc.id, buffer.framebufferID, 0, 0, &connectorID, 1, &mode)
        guard rc == 0 else {
            throw DisplayError("connector \(plan.connector.name): SetCrtc \(plan.mode.mode) failed: \(errnoDescription(-rc))", errno: -rc)
        }
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
        if captureRequested || presentCount + 1 == captureAtPresent {
            captureRequested = false
            lastCapture = try presentCapturing(buffer, damage: damage)
            return
        }
        try present(buffer, damage: damage, capture: nil)
    }

    private var captureRequested = false
    private var captureAtPresent: Int?
    /// Presents since `start`; the n-th present is the frame the n-th flip event shows.
    public private(set) var presentCount = 0
    /// The capture made by the last capturing present.
    public private(set) var lastCapture: WritebackCapture?

    /// Makes the next `present` (whoever calls it: the layer engine, a demo) also capture the frame through the
    /// writeback connector; the result lands in `lastCapture`.
    public func captureNextPresent() throws {
        try requireWriteback()
        captureRequested = true
    }

    /// Captures the `number`-th present since `start` (1-based), the frame the `number`-th flip puts on screen.
    /// Counting presents rather than reacting to a flip keeps the choice exact whoever presents and whenever.
    public func capturePresent(number: Int) throws {
        try requireWriteback()
        captureAtPresent = number
    }

    private func requireWriteback() throws {
        guard writeback != nil else {
            throw DisplayError("connector \(info.connector): no writeback connector routed (enable writeback at open)")
        }
    }

    private func present(_ buffer: PixelBuffer, damage: [Rect]?, capture: WritebackCapture?) throws {
        guard started else { throw DisplayError("connector \(info.connector): present before start") }
        guard pendingIndex == nil else { throw DisplayError("connector \(info.connector): flip already pending") }
        // An inactive CRTC refuses page flips (EINVAL); say why instead.
        guard isPoweredOn else { throw DisplayError("connector \(info.connector): present while the output is off") }
        guard buffers.indices.contains(buffer.index), states[buffer.index] == .acquired else {
            throw DisplayError("connector \(info.connector): buffer \(buffer.index) was not acquired")
        }
        let fb = buffers[buffer.index]
        let userData = Unmanaged.passUnretained(self).toOpaque()
        // A capture completes after its frame has been latched; a commit that takes the writeback connector off
        // the CRTC before then would drop the job and its fence would never signal. Captures are diagnostics, so
        // waiting for the fence here (normally already signalled) is the simple, safe choice.
        if let pending = lastCapture, displayDetached, !pending.waitForFence(timeoutMs: 250) {
            logger.warning("connector \(info.connector): writeback capture still running; presenting anyway")
        }
        switch commitAPI {
        case .atomic:
            let req = try AtomicRequest()
            req.add(plan.primaryPlane.id, planeProps["FB_ID"]?.id, UInt64(fb.framebufferID), what: "plane FB_ID")
            var clipsBlob: UInt32 = 0
            if supportsDamageClips, let damage, !damage.isEmpty {
                clipsBlob = makeDamageBlob(damage)
                if clipsBlob != 0 {
                    req.add(plan.primaryPlane.id, planeProps["FB_DAMAGE_CLIPS"]?.id, UInt64(clipsBlob), what: "plane FB_DAMAGE_CLIPS")
                }
            }
            var flags = UInt32(DRM_MODE_ATOMIC_NONBLOCK) | UInt32(DRM_MODE_PAGE_FLIP_EVENT)
            let conn = plan.connector
            if capture != nil, let wb = writeback, !writebackCloned {
                req.add(conn.id, connectorProps["CRTC_ID"]?.id, 0, what: "connector \(conn.name) CRTC_ID")
                wb.attach(to: req, crtc: plan.crtc.id)
                flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET)
            } else if displayDetached, let wb = writeback {
                req.add(conn.id, connectorProps["CRTC_ID"]?.id, UInt64(plan.crtc.id), what: "connector \(conn.name) CRTC_ID")
                wb.detach(from: req)
                flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET)
            }
            capture?.addToRequest(req)
            let result = req.commit(fd: card.fd, flags: flags, userData: userData)
            if clipsBlob != 0 { drmModeDestroyPropertyBlob(card.fd, clipsBlob) }
            if case .failure(let e) = result {
                throw DisplayError("connector \(info.connector): atomic page flip failed: \(e.message)", errno: e.errno)
            }
            if writeback != nil, !writebackCloned { displayDetached = capture != nil }
        case .legacy:
            let rc = drmModePageFlip(card.fd, plan.crtc.id, fb.framebufferID, UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData)
            guard rc == 0 else {
                throw DisplayError("connector \(info.connector): page flip failed: \(errnoDescription(-rc))", errno: -rc)
            }
        case .headless: preconditionFailure()
        }
        states[buffer.index] = .pending
        pendingIndex = buffer.index
        presentCount += 1
    }

    /// Forgets a pending flip whose event will never come (after a modeset that replaced it): its buffer is free.
    func forgetPendingFlip() {
        if let index = pendingIndex { states[index] = .free }
        pendingIndex = nil
    }

    /// The buffer on screen, to modeset with again.
    var frontBuffer: DumbBuffer { buffers[frontIndex ?? 0] }

    private func makeDamageBlob(_ rects: [Rect]) -> UInt32 {
        var clips = rects.map { r in
            drm_mode_rect(x1: Int32(r.x), y1: Int32(r.y), x2: Int32(r.maxX), y2: Int32(r.maxY))
        }
        var id: UInt32 = 0
        let rc = clips.withUnsafeMutableBytes { drmModeCreatePropertyBlob(card.fd, $0.baseAddress, $0.count, &id) }
        return rc == 0 ? id : 0
    }

    func dispatchEvents() {
        var ctx = drmEventContext()
        // Version 3 is the first with page_flip_handler2, which adds the CRTC id.
        ctx.version = 3
        ctx.page_flip_handler2 = { _, sequence, sec, usec, crtcID, userData in
            guard let userData else { return }
            let backend = Unmanaged<DRMBackend>.fromOpaque(userData).takeUnretainedValue()
            let ns = UInt64(sec) * 1_000_000_000 + UInt64(usec) * 1000
            backend.flipCompleted(sequence: sequence, timestamp: MonotonicInstant(nanoseconds: ns), crtcID: crtcID)
        }
        if drmHandleEvent(card.fd, &ctx) != 0 {
            logger.error("connector \(info.connector): reading DRM events failed: \(errnoDescription(errno))")
        }
    }

    private var sequenceHigh: UInt64 = 0
    private var lastSequence32: UInt32?

    private func flipCompleted(sequence: UInt32, timestamp: MonotonicInstant, crtcID: UInt32) {
        guard let index = pendingIndex else {
            logger.warning("connector \(info.connector): page-flip event with no flip pending (CRTC \(crtcID))")
            return
        }
        // The kernel's vblank counter is 32 bits in this event; extend it so gaps stay right across a wrap.
        if let last = lastSequence32, sequence < last { sequenceHigh += 1 << 32 }
        lastSequence32 = sequence
        if let f = frontIndex { states[f] = .free }
        states[index] = .front
        frontIndex = index
        pendingIndex = nil
        onFlip?(FlipEvent(sequence: sequenceHigh | UInt64(sequence), timestamp: timestamp, bufferIndex: index))
    }

    public func frontBufferSnapshot() -> [UInt8]? {
        frontIndex.map { buffers[$0].readPixels() }
    }

    /// Blocks until the pending flip completes (or `timeoutMs` passes). Used at shutdown and by tests; the main
    /// loop never waits like this while running.
    @discardableResult
    public func waitForPendingFlip(timeoutMs: Int32 = 1000) -> Bool {
        var deadline = timeoutMs
        while pendingIndex != nil && deadline > 0 {
            var pfd = pollfd(fd: card.fd, events: Int16(POLLIN), revents: 0)
            let start = MonotonicInstant.now()
            let n = poll(&pfd, 1, deadline)
            if n > 0 { dispatchEvents() } else if n == 0 { break } else if errno != EINTR { break }
            deadline -= Int32((MonotonicInstant.now() - start).milliseconds)
        }
        return pendingIndex == nil
    }

    // MARK: - Power

    /// Atomic: a modeset commit of the CRTC's ACTIVE property alone (ALLOW_MODESET, since the CRTC's enabled state
    /// changes), so the mode blob, the connector routing and the primary plane with the framebuffer it shows all
    /// stay in the state, and ACTIVE=1 brings the same frame back
    /// (https://docs.kernel.org/gpu/drm-kms.html#standard-crtc-properties). Legacy: the connector's DPMS property,
    /// which drivers built on the atomic helpers turn into the same ACTIVE switch. Blocking: a DPMS change is a
    /// rare, deliberate event, and the next present must not race it.
    public func setPower(_ on: Bool) throws {
        guard on != isPoweredOn else { return }
        let what = on ? "power on" : "power off"
        guard started else { throw DisplayError("connector \(info.connector): \(what) before start") }
        if !on {
            // Cleared first, so a present from the pending flip's callback is refused rather than queued.
            isPoweredOn = false
            guard waitForPendingFlip() else {
                isPoweredOn = true
                throw DisplayError("connector \(info.connector): \(what): the pending flip did not complete within 1 s")
            }
        }
        do {
            switch commitAPI {
            case .atomic: try setActive(on)
            case .legacy: try setDPMS(on)
            case .headless: preconditionFailure("DRM backend with headless commit API")
            }
        } catch {
            isPoweredOn = !on
            throw error
        }
        isPoweredOn = on
        logger.info("connector \(info.connector): \(what)")
    }

    private func setActive(_ on: Bool) throws {
        let crtc = plan.crtc.id, value: UInt64 = on ? 1 : 0
        let req = try AtomicRequest()
        req.add(crtc, crtcProps["ACTIVE"]?.id, value, what: "CRTC \(crtc) ACTIVE")
        if case .failure(let e) = req.commit(fd: card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil) {
            throw DisplayError("connector \(info.connector): \(on ? "power on" : "power off") (CRTC \(crtc) ACTIVE=\(value)) failed: \(e.message)")
        }
    }

    private func setDPMS(_ on: Bool) throws {
        let connector = plan.connector
        guard let dpms = connectorProps["DPMS"] else {
            throw DisplayError("connector \(connector.name): no DPMS property; cannot switch the output's power")
        }
        let value = UInt64(on ? DRM_MODE_DPMS_ON : DRM_MODE_DPMS_OFF)
        let rc = drmModeConnectorSetProperty(card.fd, connector.id, dpms.id, value)
        guard rc == 0 else {
            throw DisplayError("connector \(connector.name): \(on ? "power on" : "power off") (DPMS \(on ? "On" : "Off")) failed: \(errnoDescription(rc < 0 ? -rc : errno))")
        }
    }

    // MARK: - Stop

    public func stop() {
        guard started else { return }
        if !waitForPendingFlip() {
            logger.error("connector \(info.connector): flip did not complete within 1 s; restoring anyway")
        }
        if !isPoweredOn {
            // Restoring sets the CRTC's configuration but, under legacy, not the connector's DPMS state.
            do { try setPower(true) } catch { logger.error("\(error)") }
        }
        source?.cancel()
        source = nil
        restore()
        started = false
        onFlip = nil
    }

    /// Puts back what was on the CRTC before `start`: its framebuffer and mode (usually the console's), or turns
    /// it off if it was off, so a stopped kiosk does not leave a frozen frame or a dangling framebuffer.
    private func restore() {
        let crtc = plan.crtc.id
        if let mode = saved.mode, let fb = saved.bufferID, !savedConnectorIDs.isEmpty {
            var raw = mode.raw
            var ids = savedConnectorIDs
            // SetCrtc takes every connector not listed (the writeback one too) off this CRTC.
            let rc = drmModeSetCrtc(card.fd, crtc, fb, saved.x, saved.y, &ids, Int32(ids.count), &raw)
            if rc != 0 { logger.error("CRTC \(crtc): restoring the previous configuration failed: \(errnoDescription(-rc))") }
            return
        }
        switch commitAPI {
        case .atomic:
            guard let req = try? AtomicRequest() else { return }
            req.add(plan.connector.id, connectorProps["CRTC_ID"]?.id, 0, what: "connector CRTC_ID")
            writeback?.detach(from: req)
            req.add(crtc, crtcProps["ACTIVE"]?.id, 0, what: "CRTC ACTIVE")
            req.add(crtc, crtcProps["MODE_ID"]?.id, 0, what: "CRTC MODE_ID")
            req.add(plan.primaryPlane.id, planeProps["FB_ID"]?.id, 0, what: "plane FB_ID")
            req.add(plan.primaryPlane.id, planeProps["CRTC_ID"]?.id, 0, what: "plane CRTC_ID")
            if case .failure(let e) = req.commit(fd: card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil) {
                logger.error("CRTC \(crtc): turning the CRTC off failed: \(e.message)")
            }
        case .legacy:
            let rc = drmModeSetCrtc(card.fd, crtc, 0, 0, 0, nil, 0, nil)
            if rc != 0 { logger.error("CRTC \(crtc): turning the CRTC off failed: \(errnoDescription(-rc))") }
        case .headless: break
        }
    }

    // MARK: - Writeback

    /// Presents `buffer` and asks the writeback connector to capture the frame the CRTC produces for it.
    public func presentCapturing(_ buffer: PixelBuffer, damage: [Rect]? = nil) throws -> WritebackCapture {
        guard let writeback else {
            throw DisplayError("connector \(info.connector): no writeback connector routed (enable writeback at open)")
        }
        let capture = try WritebackCapture(connector: writeback, card: card, size: info.mode.size)
        try present(buffer, damage: damage, capture: capture)
        return capture
    }
}
