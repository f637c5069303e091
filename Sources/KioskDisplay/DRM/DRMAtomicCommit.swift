import CDRM
import Glibc
import KioskCore

/// Atomic commits (DRM_CLIENT_CAP_ATOMIC): a modeset is one ALLOW_MODESET commit of the connector's CRTC_ID, the
/// CRTC's MODE_ID blob and ACTIVE, and the primary plane, with what a previous master left on turned off and the
/// hooks' additions; a flip is a NONBLOCK commit of the plane's FB_ID (and FB_DAMAGE_CLIPS) carrying the hooks'
/// planes and writeback; power is the CRTC's ACTIVE alone. Stateless; the mode blob is the backend's `modeBlobID`.
struct DRMAtomicCommit: DRMCommitInterface {
    var api: CommitAPI { .atomic }
    var carriesHooks: Bool { true }
    var allowsAtomicFallback: Bool { true }

    /// For a fallback step: the card's atomic capability was turned on when the output opened atomic.
    init() {}

    /// Nil when the card refuses the atomic client capability. Writeback connectors are asked for too (capture).
    init?(card: DRMCard) {
        guard card.setClientCap(Int32(DRM_CLIENT_CAP_ATOMIC), 1) else { return nil }
        card.setClientCap(Int32(DRM_CLIENT_CAP_WRITEBACK_CONNECTORS), 1)
    }

    func modeset(_ backend: DRMBackend, buffer: DumbBuffer) throws {
        let card = backend.card, plan = backend.plan
        var mode = plan.mode.raw
        // A modeset after master was regained or a flip timed out makes a new blob: the old one goes first.
        if backend.modeBlobID != 0 { drmModeDestroyPropertyBlob(card.fd, backend.modeBlobID) }
        backend.modeBlobID = 0
        var blob: UInt32 = 0
        let rc = drmModeCreatePropertyBlob(card.fd, &mode, MemoryLayout<drmModeModeInfo>.size, &blob)
        guard rc == 0 else { throw OutputError("CRTC \(plan.crtc.id): create MODE_ID blob failed: \(errnoDescription(-rc))", errno: -rc) }
        backend.modeBlobID = blob
        let req = try backend.modesetRequest(buffer: buffer, modeBlobID: blob)
        // Overlay and cursor planes, and another CRTC on the connector, that a previous master left on.
        let stray = backend.strayStateForModeset(buffer: buffer, modeBlobID: blob)
        if let (state, res) = stray { backend.addTurningOff(state, from: res, to: req) }
        for hook in backend.commitHooks { try hook.modesetting(req, buffer: buffer, modeBlobID: blob, backend: backend) }
        if case .failure(let e) = req.commit(fd: card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil) {
            throw OutputError("connector \(plan.connector.name): atomic modeset \(plan.mode.mode) failed: \(e.message)", errno: e.errno)
        }
        if let (state, _) = stray {
            backend.logger.info("connector \(plan.connector.name): turned off what a previous master left on: \(state.description)")
        }
    }

    /// A TEST_ONLY modeset of the plan's connector, CRTC, mode and primary plane with `buffer`, in a blob of its own.
    func probeModeset(_ backend: DRMBackend, buffer: DumbBuffer) throws {
        let fd = backend.card.fd, plan = backend.plan
        var mode = plan.mode.raw
        var blob: UInt32 = 0
        let rc = drmModeCreatePropertyBlob(fd, &mode, MemoryLayout<drmModeModeInfo>.size, &blob)
        guard rc == 0 else {
            throw OutputError("CRTC \(plan.crtc.id): create MODE_ID blob failed: \(errnoDescription(-rc))", errno: -rc)
        }
        defer { drmModeDestroyPropertyBlob(fd, blob) }
        let req = try backend.modesetRequest(buffer: buffer, modeBlobID: blob)
        let flags = UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET) | UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
        if case .failure(let e) = req.commit(fd: fd, flags: flags, userData: nil) {
            throw OutputError("TEST_ONLY modeset \(plan.mode.mode.exactDescription) refused: \(e.message)", errno: e.errno)
        }
    }

    func flip(_ backend: DRMBackend, to buffer: DumbBuffer, damage: [Rect]?, userData: UnsafeMutableRawPointer?) throws {
        let fd = backend.card.fd, plane = backend.plan.primaryPlane.id
        let req = try AtomicRequest()
        var flags = UInt32(DRM_MODE_ATOMIC_NONBLOCK) | UInt32(DRM_MODE_PAGE_FLIP_EVENT)
        do {
            for hook in backend.commitHooks { flags |= try hook.flipping(req, backend: backend) }
        } catch {
            for hook in backend.commitHooks { hook.flipCommitted(false) }
            throw error
        }
        req.add(plane, backend.planeProps["FB_ID"]?.id, UInt64(buffer.framebufferID), what: "plane FB_ID")
        var clipsBlob: UInt32 = 0
        if backend.supportsDamageClips, let damage, !damage.isEmpty {
            clipsBlob = Self.damageBlob(damage, fd: fd)
            if clipsBlob != 0 {
                req.add(plane, backend.planeProps["FB_DAMAGE_CLIPS"]?.id, UInt64(clipsBlob), what: "plane FB_DAMAGE_CLIPS")
            }
        }
        let result = req.commit(fd: fd, flags: flags, userData: userData)
        if clipsBlob != 0 { drmModeDestroyPropertyBlob(fd, clipsBlob) }
        if case .failure(let e) = result {
            for hook in backend.commitHooks { hook.flipCommitted(false) }
            throw OutputError("connector \(backend.info.connector): atomic page flip failed: \(e.message)", errno: e.errno)
        }
        for hook in backend.commitHooks { hook.flipCommitted(true) }
    }

    /// A modeset commit of the CRTC's ACTIVE property alone (ALLOW_MODESET, since the CRTC's enabled state changes),
    /// so the mode blob, the connector routing and the primary plane with the framebuffer it shows all stay in the
    /// state, and ACTIVE=1 brings the same frame back (https://docs.kernel.org/gpu/drm-kms.html#standard-crtc-properties).
    func setPower(_ backend: DRMBackend, on: Bool) throws {
        let crtc = backend.plan.crtc.id, value: UInt64 = on ? 1 : 0
        let req = try AtomicRequest()
        req.add(crtc, backend.crtcProps["ACTIVE"]?.id, value, what: "CRTC \(crtc) ACTIVE")
        if case .failure(let e) = req.commit(fd: backend.card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil) {
            throw OutputError("connector \(backend.info.connector): \(on ? "power on" : "power off") (CRTC \(crtc) ACTIVE=\(value)) failed: \(e.message)")
        }
    }

    func takeOffHookPlanes(_ backend: DRMBackend) {
        guard !backend.commitHooks.isEmpty, let req = try? AtomicRequest() else { return }
        for hook in backend.commitHooks { hook.restoring(req) }
        if case .failure(let e) = req.commit(fd: backend.card.fd, flags: 0, userData: nil) {
            backend.logger.error("CRTC \(backend.plan.crtc.id): taking the hooks' planes off before the restore failed: \(e.message)")
        }
    }

    func turnOff(_ backend: DRMBackend) {
        let plan = backend.plan, crtc = plan.crtc.id
        guard let req = try? AtomicRequest() else { return }
        req.add(plan.connector.id, backend.connectorProps["CRTC_ID"]?.id, 0, what: "connector CRTC_ID")
        for hook in backend.commitHooks { hook.turningOff(req) }
        req.add(crtc, backend.crtcProps["ACTIVE"]?.id, 0, what: "CRTC ACTIVE")
        req.add(crtc, backend.crtcProps["MODE_ID"]?.id, 0, what: "CRTC MODE_ID")
        req.add(plan.primaryPlane.id, backend.planeProps["FB_ID"]?.id, 0, what: "plane FB_ID")
        req.add(plan.primaryPlane.id, backend.planeProps["CRTC_ID"]?.id, 0, what: "plane CRTC_ID")
        if case .failure(let e) = req.commit(fd: backend.card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil) {
            backend.logger.error("CRTC \(crtc): turning the CRTC off failed: \(e.message)")
        }
    }

    func takeOff(plane: UInt32, properties: DRMPropertyTable, backend: DRMBackend) throws {
        let req = try AtomicRequest()
        req.add(plane, properties["FB_ID"]?.id, 0, what: "plane \(plane) FB_ID")
        req.add(plane, properties["CRTC_ID"]?.id, 0, what: "plane \(plane) CRTC_ID")
        if case .failure(let e) = req.commit(fd: backend.card.fd, flags: 0, userData: nil) {
            throw OutputError("plane \(plane): taking it off failed: \(e.message)", errno: e.errno)
        }
    }

    private static func damageBlob(_ rects: [Rect], fd: Int32) -> UInt32 {
        var clips = rects.map { r in
            drm_mode_rect(x1: Int32(r.x), y1: Int32(r.y), x2: Int32(r.maxX), y2: Int32(r.maxY))
        }
        var id: UInt32 = 0
        let rc = clips.withUnsafeMutableBytes { drmModeCreatePropertyBlob(fd, $0.baseAddress, $0.count, &id) }
        return rc == 0 ? id : 0
    }
}

/// The atomic requests the atomic interface and the hooks build from the backend's plan (writeback probes its
/// routing with them).
extension DRMBackend {
    /// An atomic request routing the connector to the CRTC with the mode blob, the CRTC active and the primary plane
    /// showing `buffer`: the core of every modeset, and of the TEST_ONLY probes made before one.
    func modesetRequest(buffer: DumbBuffer, modeBlobID: UInt32) throws -> AtomicRequest {
        let req = try AtomicRequest()
        let conn = plan.connector, crtc = plan.crtc.id
        req.add(conn.id, connectorProps["CRTC_ID"]?.id, UInt64(crtc), what: "connector \(conn.name) CRTC_ID")
        req.add(crtc, crtcProps["MODE_ID"]?.id, UInt64(modeBlobID), what: "CRTC \(crtc) MODE_ID")
        req.add(crtc, crtcProps["ACTIVE"]?.id, 1, what: "CRTC \(crtc) ACTIVE")
        addPlane(req, buffer: buffer)
        return req
    }

    /// Whether the kernel would accept `req` as a modeset (ALLOW_MODESET | TEST_ONLY). Test-only refusals are
    /// expected answers, not faults: callers log them at debug or say what they do instead.
    func acceptsModeset(_ req: AtomicRequest) -> Bool {
        let flags = UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET) | UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
        if case .success = req.commit(fd: card.fd, flags: flags, userData: nil) { return true }
        return false
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
}
