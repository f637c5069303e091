import CDRM
import Glibc
import KioskCore

/// How the DRM backend gives the CRTC back at stop: what was on it before `start`, set again with a SetCrtc whatever
/// the commit interface, or the CRTC turned off through the interface. Main thread, like the backend.
extension DRMBackend {
    /// Puts back what was on the CRTC before `start`: its framebuffer and mode (usually the console's), or turns
    /// it off if it was off, so a stopped kiosk does not leave a frozen frame or a dangling framebuffer.
    func restore() {
        let crtc = plan.crtc.id
        if let mode = saved.mode, let fb = saved.bufferID, !savedConnectorIDs.isEmpty {
            // SetCrtc leaves other planes as they are: the planes hooks put on the CRTC (a cursor) go first.
            commit.takeOffHookPlanes(self)
            var raw = mode.raw
            var ids = savedConnectorIDs
            // SetCrtc takes every connector not listed (the writeback one too) off this CRTC.
            let rc = drmModeSetCrtc(card.fd, crtc, fb, saved.x, saved.y, &ids, Int32(ids.count), &raw)
            if rc != 0 { logger.error("CRTC \(crtc): restoring the previous configuration failed: \(errnoDescription(-rc))") }
            return
        }
        commit.turnOff(self)
    }
}
