import CDRM
import Glibc
import KioskCore

/// Flip pacing on the DRM backend: by the CRTC's vblank where the driver has one, else by a timer at the mode's
/// refresh (`FlipPacer`). Drivers that never set up vblank handling (virtio-gpu, bochs, many SPI and USB panels)
/// still send a page-flip event, but the kernel's atomic helpers send it as soon as the commit is done, with
/// sequence 0: an engine that presents again from the flip callback would spin. Main thread, like the backend.
extension DRMBackend {
    /// Whether flips are paced by vblank or by a timer, and why.
    public var flipPacing: FlipPacing { pacer?.pacing ?? .vblank }

    /// The pacer for a started output. DRM_IOCTL_CRTC_GET_SEQUENCE answers EOPNOTSUPP when the device has no vblank
    /// support at all (`drm_dev_has_vblank`): then the timer paces from the first flip. Any other answer leaves the
    /// decision to the flip events themselves (`FlipPacer.vblankMissing`): a driver may have vblank support and
    /// still complete flips without one.
    func choosePacing(now: MonotonicInstant) -> FlipPacer {
        let pacer = FlipPacer(frameDuration: info.mode.frameDuration)
        var sequence: UInt64 = 0
        var nanoseconds: UInt64 = 0
        if drmCrtcGetSequence(card.fd, plan.crtc.id, &sequence, &nanoseconds) != 0, errno == EOPNOTSUPP {
            let reason = "driver \(card.driver) has no vblank (CRTC \(plan.crtc.id) get sequence: \(errnoDescription(EOPNOTSUPP)))"
            pacer.useTimer(reason: reason, now: now)
            logger.notice("connector \(info.connector): flips paced by a timer at \(ModeTiming.formatHz(info.mode.refreshRate)) Hz: \(reason)")
        }
        return pacer
    }

    /// Passes a page-flip event through the pacer to `finishFlip`, logging once when it finds the driver has no vblank.
    func pace(_ raw: FlipEvent) {
        guard let pacer, let loop else { return finishFlip(raw) }
        if let reason = pacer.flipCompleted(raw, on: loop, deliver: { [weak self] event in self?.finishFlip(event) }) {
            logger.notice("connector \(info.connector): flips paced by a timer at \(ModeTiming.formatHz(info.mode.refreshRate)) Hz: \(reason)")
        }
    }
}
