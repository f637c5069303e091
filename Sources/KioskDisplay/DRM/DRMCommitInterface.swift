import CDRM
import KioskCore

/// How a `DRMBackend` puts its configuration and its frames into the kernel: one implementation per commit API,
/// `DRMAtomicCommit` (atomic commits) and `DRMLegacyCommit` (SetCrtc, PageFlip, the DPMS property, SetPlane). The
/// backend keeps the state (plan, buffers, hooks, the pending flip) and asks its interface for every call whose form
/// depends on the API; nothing outside the two implementations asks which API is in use. Implementations are
/// stateless: what they set (the mode blob) is kept on the backend. Main thread, like the backend.
protocol DRMCommitInterface: Sendable {
    /// The API, as reported (`OutputInfo.commitAPI`, the fallback steps).
    var api: CommitAPI { get }

    /// Whether the interface's commits are atomic requests that `DRMCommitHook`s ride along on: overlay and cursor
    /// planes, writeback capture, damage clips, TEST_ONLY probes. Hooks refuse to attach, or take their planes off
    /// once, when it is false.
    var carriesHooks: Bool { get }

    /// Whether a fallback from this interface may take atomic steps (`ConfigurationFallback`): the card's atomic
    /// capability is on.
    var allowsAtomicFallback: Bool { get }

    /// Sets the plan's mode on its CRTC and connector showing `buffer` (at `start`, after master was regained, at a
    /// fallback step): blocking, with the hooks' additions where the interface carries them.
    func modeset(_ backend: DRMBackend, buffer: DumbBuffer) throws

    /// Whether the kernel would take `modeset` of the plan as it stands, without changing anything. Throws the
    /// refusal. An interface with no such probe returns: its modeset is the probe.
    func probeModeset(_ backend: DRMBackend, buffer: DumbBuffer) throws

    /// Queues a page flip to `buffer` on the next vblank, its event carrying `userData`, and tells every hook whether
    /// it was committed. `damage` names what changed, where the plane takes damage clips.
    func flip(_ backend: DRMBackend, to buffer: DumbBuffer, damage: [Rect]?, userData: UnsafeMutableRawPointer?) throws

    /// Blanks or lights the output with its state kept, so lighting it shows the same frame. Blocking.
    func setPower(_ backend: DRMBackend, on: Bool) throws

    /// Before the CRTC is given back with a SetCrtc at stop (which leaves every plane but the primary as it is):
    /// takes off the planes hooks put on it.
    func takeOffHookPlanes(_ backend: DRMBackend)

    /// At stop, when nothing was on the CRTC before `start`: turns the CRTC off, and the connector and planes with it.
    func turnOff(_ backend: DRMBackend)

    /// Takes one plane a hook put on off its CRTC (blocking; after the output fell back to this interface from one
    /// that carried hooks, whose planes it leaves as they are).
    func takeOff(plane: UInt32, properties: DRMPropertyTable, backend: DRMBackend) throws
}

/// Choosing the commit interface. The only place a commit API is mapped to its implementation.
enum DRMCommit {
    /// The interface `choice` asks for on `card`: atomic when asked or (`auto`) when the card takes the atomic client
    /// capability, legacy otherwise. Turns on the client capabilities the interface needs.
    ///
    /// - Throws: `OutputError` when atomic commits are asked for and the card refuses them.
    static func open(_ choice: CommitChoice, on card: DRMCard) throws -> any DRMCommitInterface {
        switch choice {
        case .legacy: return DRMLegacyCommit()
        case .atomic:
            guard let atomic = DRMAtomicCommit(card: card) else {
                throw OutputError("device \(card.path) (\(card.driver)): atomic modesetting not supported; use --commit legacy")
            }
            return atomic
        case .auto: return DRMAtomicCommit(card: card) ?? DRMLegacyCommit()
        }
    }

    /// The interface of a fallback step (`ConfigurationFallback`): atomic steps are offered only when the output's
    /// interface was atomic, whose client capability is already on.
    static func interface(for api: CommitAPI) -> any DRMCommitInterface {
        switch api {
        case .atomic: return DRMAtomicCommit()
        case .legacy: return DRMLegacyCommit()
        case .headless, .fbdev: preconditionFailure("DRM output with the \(api.rawValue) commit API")
        }
    }
}
