import CDRM
import Glibc
import KioskCore

/// The DRM backend's session with the device: DRM master lost and regained, the device gone, and the fallback
/// (atomic to legacy commits, the requested mode to the preferred one) when the kernel refuses a configuration. Main thread, like the backend.
extension DRMBackend {
    /// The card is gone (a hang-up or error on its fd, which its session no longer watches): the engine is told,
    /// which exits for the service manager to restart kioskd.
    func deviceLost(_ error: OutputError) {
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
            throw OutputError("device \(card.path): cannot become DRM master: \(errnoDescription(e))", errno: e)
        }
        forgetPendingFlip()
        try commit.modeset(self, buffer: frontBuffer)
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
                                                 atomicAvailable: commit.allowsAtomicFallback)
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
        throw OutputError("connector \(info.connector): \(failure.errnoName) at commit with \(refused); nothing left to fall back to\(tried)",
                           errno: failure.errno)
    }

    /// Sets the mode of `step` with its commit interface (probed first where it has a probe), showing the front
    /// buffer; the output keeps its configuration when the kernel refuses.
    private func use(_ step: OutputConfiguration) throws {
        guard let mode = plan.connector.modes.first(where: { $0.mode == step.mode }) else {
            throw OutputError("connector \(info.connector): mode \(step.mode.exactDescription) is not offered")
        }
        let next = DRMCommit.interface(for: step.commitAPI)
        let before = plan.mode
        plan.mode = mode
        do {
            try next.probeModeset(self, buffer: frontBuffer)
            try next.modeset(self, buffer: frontBuffer)
        } catch {
            plan.mode = before
            throw error
        }
        commit = next
        info.commitAPI = next.api
        info.mode = mode.mode
    }
}
