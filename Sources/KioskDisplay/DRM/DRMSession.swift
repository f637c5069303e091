import CDRM
import Glibc
import KioskCore

/// The DRM backend's session with the device: DRM master lost and regained, the device gone, and the fallback
/// from atomic to legacy commits when the kernel refuses an atomic configuration. Main thread, like the backend.
extension DRMBackend {
    /// The card's fd is ready. A hang-up or error means the device is gone (unplugged, driver unbound): under
    /// level-triggered epoll it would be reported again at every turn of the loop, so the fd is unwatched at once
    /// and the engine told, which exits for the service manager to restart kioskd.
    func cardReady(_ events: IOEvents) {
        guard events.isDisjoint(with: [.hangup, .error]) else {
            source?.cancel()
            source = nil
            let what = events.contains(.hangup) ? "EPOLLHUP" : "EPOLLERR"
            let error = DisplayError("device \(card.path): \(what) on the DRM fd")
            logger.error("\(error.message)")
            forgetPendingFlip()
            onDeviceLost?(error)
            return
        }
        dispatchEvents()
    }

    /// Gives DRM master up on purpose (for another process to take the display, e.g. on SIGUSR1): a pending flip
    /// completes first; nothing is presented until `reacquire`.
    public func dropMaster() throws {
        waitForPendingFlip()
        forgetPendingFlip()
        if drmDropMaster(card.fd) != 0 {
            let e = errno
            throw DisplayError("device \(card.path): dropping DRM master failed: \(errnoDescription(e))", errno: e)
        }
        logger.notice("device \(card.path): DRM master dropped")
    }

    /// Takes DRM master (back) and sets the mode again showing the front buffer, so a display another master left
    /// in any state shows kioskd's frame. Throws EACCES/EPERM (naming the device) while another process holds it.
    public func reacquire() throws {
        if drmIsMaster(card.fd) == 0, drmSetMaster(card.fd) != 0 {
            let e = errno
            throw DisplayError("device \(card.path): cannot become DRM master: \(errnoDescription(e))", errno: e)
        }
        forgetPendingFlip()
        switch commitAPI {
        case .atomic: try modesetAtomic(buffer: frontBuffer)
        case .legacy: try modesetLegacy(buffer: frontBuffer)
        case .headless: preconditionFailure("DRM backend with headless commit API")
        }
        logger.info("connector \(info.connector): DRM master held, mode \(info.mode) set")
    }

    /// After EINVAL or ENOSPC at commit: atomic falls back to legacy SetCrtc + PageFlip, which drivers accept for
    /// the plain one-plane configuration kioskd uses. The legacy modeset is what probes it (legacy has no
    /// TEST_ONLY). Throws when legacy is already in use: there is nothing left to fall back to.
    public func fallBack(after failure: PresentFailure) throws -> String {
        guard commitAPI == .atomic else {
            throw DisplayError("connector \(info.connector): \(failure.errnoName) with legacy commits; nothing left to fall back to", errno: failure.errno)
        }
        forgetPendingFlip()
        try modesetLegacy(buffer: frontBuffer)
        commitAPI = .legacy
        info.commitAPI = .legacy
        logger.warning("connector \(info.connector): atomic commits refused (\(failure.errnoName)); using legacy commits")
        return "legacy commits"
    }
}
