import CDRM
import Glibc
import KioskCore

/// The DRM backend's session with the device: DRM master lost and regained, the device gone, and the fallback
/// (atomic to legacy commits, the requested mode to the preferred one) when the kernel refuses a configuration. Main thread, like the backend.
extension DRMBackend {
    /// The card is gone (a hang-up or error on its fd, which its session no longer watches): the engine is told,
    /// which exits for the service manager to restart kioskd.
    func deviceLost(_ error: DisplayError) {
        forgetPendingFlip()
        onDeviceLost?(error)
    }

    /// Gives DRM master up on purpose (for another process to take the display, e.g. on SIGUSR1): pending flips
    /// complete first; nothing is presented until `reacquire`. Master belongs to the card, so this hands over every
    /// output on it (`DRMCardSession.dropMaster`); for the card's other outputs it is then already dropped.
    public func dropMaster() throws {
        settleBeforeDroppingMaster()
        try card.session.dropMaster()
    }

    /// The pending flip completes (or is given up after 1 s) and is forgotten.
    func settleBeforeDroppingMaster() {
        waitForPendingFlip()
        forgetPendingFlip()
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
        case .headless, .fbdev: preconditionFailure("DRM backend with \(commitAPI.rawValue) commit API")
        }
        logger.info("connector \(info.connector): DRM master held, mode \(info.mode) set")
    }

    /// After EINVAL or ENOSPC at commit: walks `ConfigurationFallback` (atomic to legacy commits, then the requested
    /// mode to the connector's preferred one of the same size) from the configuration in use, and uses the first
    /// step the kernel takes. An atomic step is probed with a TEST_ONLY modeset first; a legacy one has no probe,
    /// its SetCrtc is the probe. Logs what was chosen; throws, naming the connector, the errno and every refusal,
    /// when nothing is left.
    public func fallBack(after failure: PresentFailure) throws -> String {
        let refused = OutputConfiguration(commitAPI, plan.mode.mode)
        if fallbackSteps == nil {
            let fallback = ConfigurationFallback(from: refused, modes: plan.connector.modes.map(\.mode),
                                                 atomicAvailable: commitAPI == .atomic)
            if let note = fallback.note { logger.warning("connector \(info.connector): \(note)") }
            fallbackSteps = fallback.steps
        }
        forgetPendingFlip()
        var refusals: [String] = []
        while let step = fallbackSteps?.first {
            fallbackSteps?.removeFirst()
            do {
                try use(step)
            } catch {
                logger.warning("connector \(info.connector): fallback to \(step) refused: \(error)")
                refusals.append("\(step): \(error)")
                continue
            }
            logger.warning("connector \(info.connector): \(failure.errnoName) at commit with \(refused); fell back to \(step)")
            return step.description
        }
        let tried = refusals.isEmpty ? "" : " (refused: \(refusals.joined(separator: "; ")))"
        throw DisplayError("connector \(info.connector): \(failure.errnoName) at commit with \(refused); nothing left to fall back to\(tried)",
                           errno: failure.errno)
    }

    /// Sets the mode of `step` with its commit API, showing the front buffer; the output keeps its configuration
    /// when the kernel refuses.
    private func use(_ step: OutputConfiguration) throws {
        guard let mode = plan.connector.modes.first(where: { $0.mode == step.mode }) else {
            throw DisplayError("connector \(info.connector): mode \(step.mode.exactDescription) is not offered")
        }
        let before = plan.mode
        plan.mode = mode
        do {
            switch step.commitAPI {
            case .atomic:
                try probeAtomicModeset()
                try modesetAtomic(buffer: frontBuffer)
            case .legacy:
                try modesetLegacy(buffer: frontBuffer)
            case .headless, .fbdev:
                preconditionFailure("DRM backend with headless commit API")
            }
        } catch {
            plan.mode = before
            throw error
        }
        commitAPI = step.commitAPI
        info.commitAPI = step.commitAPI
        info.mode = mode.mode
    }

    /// A TEST_ONLY atomic modeset of the plan's connector, CRTC, mode and primary plane with the front buffer:
    /// whether the kernel would take that configuration, without changing anything.
    private func probeAtomicModeset() throws {
        var mode = plan.mode.raw
        var blob: UInt32 = 0
        let rc = drmModeCreatePropertyBlob(card.fd, &mode, MemoryLayout<drmModeModeInfo>.size, &blob)
        guard rc == 0 else {
            throw DisplayError("CRTC \(plan.crtc.id): create MODE_ID blob failed: \(errnoDescription(-rc))", errno: -rc)
        }
        defer { drmModeDestroyPropertyBlob(card.fd, blob) }
        let req = try modesetRequest(buffer: frontBuffer, modeBlobID: blob)
        let flags = UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET) | UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
        if case .failure(let e) = req.commit(fd: card.fd, flags: flags, userData: nil) {
            throw DisplayError("TEST_ONLY modeset \(plan.mode.mode.exactDescription) refused: \(e.message)", errno: e.errno)
        }
    }
}
