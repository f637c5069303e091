/// What the health signal makes of the frames on screen (config `health:`): which screen problems count as
/// unhealthy, so that the watchdog lets systemd restart kioskd, and when each is declared. A plain value.
public struct ScreenHealthSettings: Sendable, Equatable {
    /// A problem with what is on the glass, judged from frame fingerprints (`FrameFingerprint`).
    public enum Problem: String, Sendable, CaseIterable, Comparable {
        /// The frame is one colour while the scene has visible content.
        case black
        /// The scene has content that must change, and the frame has not changed for `frozenAfter` of its changes.
        case frozen
        /// The frame the CRTC produced, read back through a writeback connector, differs from the composed frame
        /// beyond `ScanoutTolerance` (`ScanoutComparison`).
        case scanoutMismatch = "scanout_mismatch"

        public static func < (a: Problem, b: Problem) -> Bool { a.rawValue < b.rawValue }
    }

    /// Problems that make the health signal unhealthy (`health.restart_on`); the others are reported (`stats`'s
    /// `health_reason`, an `error` event, the MQTT state) with the signal still healthy. Empty by default: a screen
    /// problem alone never restarts kioskd unless the config says so.
    public var restartOn: Set<Problem> = []
    /// Expected changes (`LayerEngine.expectChange(in:)`) the frame may miss in a row before it counts as frozen
    /// (`health.frozen_after`): the change after the `frozenAfter`-th missed one finds it frozen. 5 by default, so a
    /// seconds clock that stops shows as frozen within 6 seconds and a render late by a few seconds does not.
    public var frozenAfter = 5
    /// How long a one-colour frame with visible content must stay on screen before it counts as black
    /// (`health.black_after`): a fade through black, a page turning, a video's first frame take less. 2 s by default.
    public var blackAfter = Duration.seconds(2)

    /// How often one frame is read back through the output's writeback connector and compared with the composed
    /// frame (`health.verify_every`); nil: never on a schedule (`output.verify` still asks). 10 minutes by default.
    public var verifyEvery: Duration? = .seconds(600)

    public static let frozenAfterRange = 1...1000
    /// `health.verify_every`'s range, in seconds, when it is not `0` or `off`: a second to a week.
    public static let verifyEveryRange = 1.0...604_800.0
    /// `health.black_after`'s range, in seconds.
    public static let blackAfterRange = 0.1...3600.0

    public init(restartOn: Set<Problem> = [], frozenAfter: Int = 5, blackAfter: Duration = .seconds(2)) {
        self.restartOn = restartOn
        self.frozenAfter = frozenAfter
        self.blackAfter = blackAfter
    }
}

/// The black and frozen watch of one output: fed each frame that reaches the screen (its fingerprint and whether
/// the scene had visible content) and each change the scene expects to see, it says which problem, if any, the
/// screen has now. A value type owned by the engine; main thread. Pure: the engine passes the loop's clock.
struct ScreenWatch {
    var settings = ScreenHealthSettings()
    /// The fingerprint of the frame on screen.
    private(set) var shown: FrameFingerprint?
    /// Expected changes since the frame on screen last changed.
    private(set) var missedChanges = 0
    /// Since when the frame on screen has been one colour with visible content, and which colour.
    private(set) var blackSince: MonotonicInstant?
    private var blackColor: UInt32 = 0
    /// The last scanout verification's mismatch, in a few words; nil once one matches (or none differed yet).
    private(set) var scanoutMismatch: String?

    /// A frame reached the screen.
    mutating func frameShown(_ fingerprint: FrameFingerprint, hasVisibleContent: Bool, at now: MonotonicInstant) {
        if shown?.hash != fingerprint.hash { missedChanges = 0 }
        shown = fingerprint
        if let color = fingerprint.uniformColor, hasVisibleContent {
            if blackSince == nil { blackSince = now }
            blackColor = color
        } else {
            blackSince = nil
        }
    }

    /// The scene changed something it expects to see on screen (a clock's second, a video frame).
    mutating func expectedChange() {
        guard shown != nil else { return }
        missedChanges += 1
    }

    /// A scanout verification finished: `mismatch` says how the scanned-out frame differed, nil when it matched.
    mutating func scanoutVerified(mismatch: String?) {
        scanoutMismatch = mismatch
    }

    /// Forgets what was on screen: the output went dark, or is presenting nothing for a reason of its own. A
    /// scanout mismatch stays until a verification matches: it speaks of the output, not of one frame.
    mutating func reset() {
        shown = nil
        missedChanges = 0
        blackSince = nil
    }

    /// When a black frame becomes a problem, if it is on screen and not one yet.
    var blackDue: MonotonicInstant? { blackSince.map { $0 + settings.blackAfter } }

    /// The problem on screen now, with its reason in a few words; frozen first (a frozen black screen is frozen),
    /// then a scanout mismatch (what the glass shows is not what was composed), then black.
    func problem(at now: MonotonicInstant) -> (problem: ScreenHealthSettings.Problem, reason: String)? {
        if missedChanges > settings.frozenAfter {
            return (.frozen, "frozen: the screen has not changed across \(settings.frozenAfter) changes the scene expected")
        }
        if let scanoutMismatch { return (.scanoutMismatch, "scanout_mismatch: \(scanoutMismatch)") }
        if let since = blackSince, now - since >= settings.blackAfter {
            let color = String(blackColor, radix: 16)
            let name = blackColor == 0 ? "black" : "one colour (#\(String(repeating: "0", count: 6 - color.count) + color))"
            return (.black, "black: the screen has been \(name) for \(Int(settings.blackAfter.milliseconds)) ms or more while the scene has visible content")
        }
        return nil
    }
}
