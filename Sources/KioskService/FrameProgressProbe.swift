import KioskCore

/// The default health of the frame path for the watchdog: the loop turned since the last check (a timer on a
/// hung loop never runs, so a check that runs has seen it turn) and no flip has stayed pending for longer than
/// `flipDeadline` without a flip completing. Lives on the main thread.
public final class FrameProgressProbe {
    public static let flipDeadline = Duration.seconds(1)
    private let loop: MainLoop
    private let flips: () -> Int
    private let flipPending: () -> Bool
    private var lastIterations: Int
    private var lastFlips: Int
    private var stalledSince: MonotonicInstant?

    public init(loop: MainLoop, flips: @escaping () -> Int, flipPending: @escaping () -> Bool) {
        self.loop = loop
        self.flips = flips
        self.flipPending = flipPending
        lastIterations = loop.iterations
        lastFlips = flips()
    }

    public func check() -> ServiceHealth {
        let iterations = loop.iterations, flipCount = flips()
        defer { lastIterations = iterations; lastFlips = flipCount }
        if iterations == lastIterations { return ServiceHealth(healthy: false, reason: "the main loop has not turned") }
        guard flipPending(), flipCount == lastFlips else {
            stalledSince = nil
            return ServiceHealth(healthy: true, reason: "")
        }
        let since = stalledSince ?? loop.now
        stalledSince = since
        let waited = loop.now - since
        if waited >= Self.flipDeadline {
            return ServiceHealth(healthy: false, reason: "a page flip has been pending for \(waited) with no flip completing")
        }
        return ServiceHealth(healthy: true, reason: "")
    }
}
