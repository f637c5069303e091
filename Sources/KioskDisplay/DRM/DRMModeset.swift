import CDRM
import Glibc
import KioskCore

/// How the DRM backend sets its mode and gives the CRTC back: the atomic modeset request (connector routing, the
/// mode blob, ACTIVE and the primary plane), the legacy SetCrtc, and the restore at stop. Main thread, like the
/// backend.
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

    func modesetAtomic(buffer: DumbBuffer) throws {
        var mode = plan.mode.raw
        // A modeset after master was regained or a flip timed out makes a new blob: the old one goes first.
        if modeBlobID != 0 { drmModeDestroyPropertyBlob(card.fd, modeBlobID) }
        modeBlobID = 0
        let rc = drmModeCreatePropertyBlob(card.fd, &mode, MemoryLayout<drmModeModeInfo>.size, &modeBlobID)
        guard rc == 0 else { throw DisplayError("CRTC \(plan.crtc.id): create MODE_ID blob failed: \(errnoDescription(-rc))", errno: -rc) }
        let conn = plan.connector
        let req = try modesetRequest(buffer: buffer, modeBlobID: modeBlobID)
        // Overlay and cursor planes, and another CRTC on the connector, that a previous master left on.
        let stray = strayStateForModeset(buffer: buffer, modeBlobID: modeBlobID)
        if let (state, res) = stray { addTurningOff(state, from: res, to: req) }
        for hook in commitHooks { try hook.modesetting(req, buffer: buffer, modeBlobID: modeBlobID, backend: self) }
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

    /// Puts back what was on the CRTC before `start`: its framebuffer and mode (usually the console's), or turns
    /// it off if it was off, so a stopped kiosk does not leave a frozen frame or a dangling framebuffer.
    func restore() {
        let crtc = plan.crtc.id
        if let mode = saved.mode, let fb = saved.bufferID, !savedConnectorIDs.isEmpty {
            // SetCrtc leaves other planes as they are: the planes hooks put on the CRTC (a cursor) go first.
            if commitAPI == .atomic, !commitHooks.isEmpty, let req = try? AtomicRequest() {
                for hook in commitHooks { hook.restoring(req) }
                if case .failure(let e) = req.commit(fd: card.fd, flags: 0, userData: nil) {
                    logger.error("CRTC \(crtc): taking the cursor plane off before the restore failed: \(e.message)")
                }
            }
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
            for hook in commitHooks { hook.turningOff(req) }
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
        case .headless, .fbdev: break
        }
    }
}
