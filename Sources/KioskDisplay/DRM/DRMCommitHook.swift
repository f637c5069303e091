import KioskCore

/// Something that rides along on a `DRMBackend`'s atomic commits without the backend knowing what it is: writeback
/// capture (`WritebackCapturer`). The backend asks it to add its properties to each atomic modeset and page-flip
/// request, and tells it whether each page flip (atomic or legacy) was committed. Main thread, like the backend.
protocol DRMCommitHook: AnyObject {
    /// An atomic modeset showing `buffer` with the mode blob `modeBlobID` is about to be committed (at `start`,
    /// after master was regained, after a flip timeout): add to `request` what the modeset should also set. TEST_ONLY
    /// probes may be made through `backend` first.
    func modesetting(_ request: AtomicRequest, buffer: DumbBuffer, modeBlobID: UInt32, backend: DRMBackend) throws

    /// An atomic page flip is being built: add properties to `request`; returns DRM_MODE_ATOMIC_* flags it needs
    /// on top of NONBLOCK | PAGE_FLIP_EVENT (ALLOW_MODESET when it changes the CRTC's connectors), or 0. A throw
    /// refuses the present.
    func flipping(_ request: AtomicRequest, backend: DRMBackend) throws -> UInt32

    /// The page flip just built (or a legacy one) was committed (`true`: its flip event will come) or refused.
    func flipCommitted(_ committed: Bool)

    /// The CRTC is being turned off at stop (atomic): take off it what the hook routed to it.
    func turningOff(_ request: AtomicRequest)

    /// The CRTC is being given back to what was on it before `start` with a legacy SetCrtc (atomic commits until
    /// then), which leaves every plane but the primary as it is: add to `request` the planes the hook put on.
    func restoring(_ request: AtomicRequest)
}

extension DRMCommitHook {
    func restoring(_ request: AtomicRequest) {}
}
