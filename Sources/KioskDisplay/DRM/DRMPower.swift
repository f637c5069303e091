import CDRM
import Glibc
import KioskCore

/// Display power on the DRM backend: blanking and lighting the output with its state kept. Main thread, like the
/// backend.
extension DRMBackend {
    /// Through the commit interface (the CRTC's ACTIVE under atomic, the connector's DPMS under legacy), with the
    /// state kept so lighting the output shows the same frame. Blocking: a DPMS change is a rare, deliberate event,
    /// and the next present must not race it.
    public func setPower(_ on: Bool) throws {
        guard on != isPoweredOn else { return }
        let what = on ? "power on" : "power off"
        guard isStarted else { throw OutputError("connector \(info.connector): \(what) before start") }
        if !on {
            // Cleared first, so a present from the pending flip's callback is refused rather than queued.
            isPoweredOn = false
            guard waitForPendingFlip() else {
                isPoweredOn = true
                throw OutputError("connector \(info.connector): \(what): the pending flip did not complete within 1 s")
            }
        }
        do {
            try commit.setPower(self, on: on)
        } catch {
            isPoweredOn = !on
            throw error
        }
        isPoweredOn = on
        logger.info("connector \(info.connector): \(what)")
    }
}
