/// A commit API with a mode: what an output falls back between when the kernel refuses its configuration. A plain
/// value.
public struct OutputConfiguration: Hashable, Sendable, CustomStringConvertible {
    public var commitAPI: CommitAPI
    public var mode: OutputMode

    public init(_ commitAPI: CommitAPI, _ mode: OutputMode) {
        self.commitAPI = commitAPI
        self.mode = mode
    }

    /// `legacy commits, mode 1024x768@60`.
    public var description: String { "\(commitAPI.rawValue) commits, mode \(mode.exactDescription)" }
}

/// The order in which an output falls back after the kernel refused a commit with EINVAL or ENOSPC (see
/// `PresentPolicy.fallBack`): first the commit API (atomic to legacy), then the mode (the requested one to the
/// connector's preferred one), so the mode the user asked for is kept as long as one API takes it. A pure
/// function of the output's configuration and its connector's modes.
///
/// These steps keep the size: the shadow compositor, the scanout buffers and the scene's layout are all sized to
/// the mode, so an output never changes size under them. A preferred mode of another size comes last, as another
/// output: once these steps are exhausted, `OutputManager` opens the output again in it and the scene is laid out
/// for it (`LayerEngine.onFallbackExhausted`).
public struct ConfigurationFallback: Sendable, Equatable {
    /// The configurations to try, in order, after the one in use was refused. Atomic ones are probed with a
    /// TEST_ONLY commit before they are used; legacy has no such probe, its modeset is the probe.
    public let steps: [OutputConfiguration]
    /// Why the preferred mode is not among the steps, when the connector has one of another size; nil otherwise.
    public let note: String?

    /// - current: the configuration in use (the first one refused);
    /// - modes: the connector's modes, with the preferred one flagged;
    /// - atomicAvailable: whether atomic commits may be used at all (the device has them and the user did not ask
    ///   for legacy).
    public init(from current: OutputConfiguration, modes: [OutputMode], atomicAvailable: Bool) {
        let apis: [CommitAPI] = atomicAvailable ? [.atomic, .legacy] : [.legacy]
        var steps = apis.map { OutputConfiguration($0, current.mode) }
        var note: String?
        if let preferred = modes.first(where: \.isPreferred), preferred != current.mode {
            if preferred.size == current.mode.size {
                steps += apis.map { OutputConfiguration($0, preferred) }
            } else {
                note = "the preferred mode \(preferred.exactDescription) is not a fallback of this output: its size differs from \(current.mode.exactDescription), so the output is opened again in it only once nothing of this size is taken"
            }
        }
        // What comes before the configuration in use was given up already, or never chosen.
        if let at = steps.firstIndex(of: current) { steps.removeFirst(at + 1) }
        self.steps = steps
        self.note = note
    }
}
