import CDRM
import Glibc
import KioskCore

/// Legacy KMS: a modeset is a SetCrtc of the plan's connector, mode and framebuffer; a flip is a PageFlip; power is
/// the connector's DPMS property (which drivers built on the atomic helpers turn into the CRTC's ACTIVE). No hooks
/// ride along: hooks do not attach to an output with this interface, and those attached before a fallback to it take
/// their planes off once (`takeOff`), since SetCrtc and PageFlip leave every plane but the primary as it is.
/// Stateless.
struct DRMLegacyCommit: DRMCommitInterface {
    var api: CommitAPI { .legacy }
    var carriesHooks: Bool { false }
    /// Legacy is chosen, or fallen back to, only where atomic is not to be used.
    var allowsAtomicFallback: Bool { false }

    func modeset(_ backend: DRMBackend, buffer: DumbBuffer) throws {
        let plan = backend.plan
        var connectorID = plan.connector.id
        var mode = plan.mode.raw
        let rc = drmModeSetCrtc(backend.card.fd, plan.crtc.id, buffer.framebufferID, 0, 0, &connectorID, 1, &mode)
        guard rc == 0 else {
            throw OutputError("connector \(plan.connector.name): SetCrtc \(plan.mode.mode) failed: \(errnoDescription(-rc))", errno: -rc)
        }
    }

    /// No probe: the SetCrtc of `modeset` is the probe, and the output keeps its configuration when it is refused.
    func probeModeset(_ backend: DRMBackend, buffer: DumbBuffer) throws {}

    /// PageFlip carries no damage; the hooks hear whether it was committed (those attached before a fallback take
    /// their planes off then).
    func flip(_ backend: DRMBackend, to buffer: DumbBuffer, damage: [Rect]?, userData: UnsafeMutableRawPointer?) throws {
        let rc = drmModePageFlip(backend.card.fd, backend.plan.crtc.id, buffer.framebufferID,
                                 UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData)
        for hook in backend.commitHooks { hook.flipCommitted(rc == 0) }
        guard rc == 0 else {
            throw OutputError("connector \(backend.info.connector): page flip failed: \(errnoDescription(-rc))", errno: -rc)
        }
    }

    func setPower(_ backend: DRMBackend, on: Bool) throws {
        let connector = backend.plan.connector
        guard let dpms = backend.connectorProps["DPMS"] else {
            throw OutputError("connector \(connector.name): no DPMS property; cannot switch the output's power")
        }
        let value = UInt64(on ? DRM_MODE_DPMS_ON : DRM_MODE_DPMS_OFF)
        let rc = drmModeConnectorSetProperty(backend.card.fd, connector.id, dpms.id, value)
        guard rc == 0 else {
            throw OutputError("connector \(connector.name): \(on ? "power on" : "power off") (DPMS \(on ? "On" : "Off")) failed: \(errnoDescription(rc < 0 ? -rc : errno))")
        }
    }

    /// Nothing: the hooks' planes came off when the output fell back to this interface.
    func takeOffHookPlanes(_ backend: DRMBackend) {}

    func turnOff(_ backend: DRMBackend) {
        let crtc = backend.plan.crtc.id
        let rc = drmModeSetCrtc(backend.card.fd, crtc, 0, 0, 0, nil, 0, nil)
        if rc != 0 { backend.logger.error("CRTC \(crtc): turning the CRTC off failed: \(errnoDescription(-rc))") }
    }

    func takeOff(plane: UInt32, properties: DRMPropertyTable, backend: DRMBackend) throws {
        let rc = drmModeSetPlane(backend.card.fd, plane, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        guard rc == 0 else {
            let e = rc < 0 ? -rc : errno
            throw OutputError("plane \(plane): taking it off failed: \(errnoDescription(e))", errno: e)
        }
    }
}
