import CDRM
import Glibc
import KioskCore

/// Display power on the DRM backend: blanking and lighting the output with its state kept. Main thread, like the
/// backend.
extension DRMBackend {
    /// Atomic: a modeset commit of the CRTC's ACTIVE property alone (ALLOW_MODESET, since the CRTC's enabled state
    /// changes), so the mode blob, the connector routing and the primary plane with the framebuffer it shows all
    /// stay in the state, and ACTIVE=1 brings the same frame back
    /// (https://docs.kernel.org/gpu/drm-kms.html#standard-crtc-properties). Legacy: the connector's DPMS property,
    /// which drivers built on the atomic helpers turn into the same ACTIVE switch. Blocking: a DPMS change is a
    /// rare, deliberate event, and the next present must not race it.
    public func setPower(_ on: Bool) throws {
        guard on != isPoweredOn else { return }
        let what = on ? "power on" : "power off"
        guard isStarted else { throw DisplayError("connector \(info.connector): \(what) before start") }
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
            case .headless, .fbdev: preconditionFailure("DRM backend with \(commitAPI.rawValue) commit API")
            }
        } catch {
            isPoweredOn = !on
            throw error
        }
        isPoweredOn = on
        logger.info("connector \(info.connector): \(what)")
    }

    func setActive(_ on: Bool) throws {
        let crtc = plan.crtc.id, value: UInt64 = on ? 1 : 0
        let req = try AtomicRequest()
        req.add(crtc, crtcProps["ACTIVE"]?.id, value, what: "CRTC \(crtc) ACTIVE")
        if case .failure(let e) = req.commit(fd: card.fd, flags: UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET), userData: nil) {
            throw DisplayError("connector \(info.connector): \(on ? "power on" : "power off") (CRTC \(crtc) ACTIVE=\(value)) failed: \(e.message)")
        }
    }

    func setDPMS(_ on: Bool) throws {
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
}
