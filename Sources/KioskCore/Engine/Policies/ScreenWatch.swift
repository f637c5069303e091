/// What the health signal makes of the frames on screen (config `health:`): which screen problems count as
/// unhealthy, so that the watchdog lets systemd restart kioskd, and when each is declared. A plain value.
public struct ScreenHealthSettings: Sendable, Equatable {
    /// A problem with what is on the glass, judged from frame fingerprints (`FrameFingerprint`).
    public enum Problem: String, Sendable, CaseIterable, Comparable {
        /// The frame is one colour while the scene has visible content.
        case black
        /// The scene has content that must change, and the frame has not changed for `frozenAfter` of its changes.
        case frozen

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

    public static let frozenAfterRange = 1...1000
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

    /// Forgets what was on screen: the output went dark, or is presenting nothing for a reason of its own.
    mutating func reset() {
        shown = nil
        missedChanges = 0
        blackSince = nil
    }

    /// When a black frame becomes a problem, if it is on screen and not one yet.
    var blackDue: MonotonicInstant? { blackSince.map { $0 + settings.blackAfter } }

    /// The problem on screen now, with its reason in a few words; frozen first (a frozen black screen is frozen).
    func problem(at now: MonotonicInstant) -> (problem: ScreenHealthSettings.Problem, reason: String)? {
        if missedChanges > settings.frozenAfter {
            return (.frozen, "frozen: the screen has not changed across \(settings.frozenAfter) changes the scene expected")
        }
        if let since = blackSince, now - since >= settings.blackAfter {
            let color = String(blackColor, radix: 16)
            let name = blackColor == 0 ? "black" : "one colour (#\(String(repeating: "0", count: 6 - color.count) + color))"
            return (.black, "black: the screen has been \(name) for \(Int(settings.blackAfter.milliseconds)) ms or more while the scene has visible content")
        }
        return nil
    }
}
