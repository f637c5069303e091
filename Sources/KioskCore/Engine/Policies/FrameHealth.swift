/// The one answer to "is the frame path healthy?": the loop turned within the last second, no flip is overdue, and
/// nothing fatal happened. An idle kiosk that flips nothing is healthy; so is one waiting to regain DRM master
/// (restarting it would not bring master back). `stats` reports it as `healthy` with `health_reason`; the service
/// layer feeds the systemd watchdog from it. A black or frozen screen (`ScreenWatch`) is a reason too, healthy
/// unless the config's `health.restart_on` names it. A plain value, computed on the main thread by `LayerEngine.health`.
public struct FrameHealth: Sendable, Equatable, CustomStringConvertible {
    public let isHealthy: Bool
    /// Why, in a few words: `ok`, `waiting for DRM master`, or what is wrong.
    public let reason: String

    public init(isHealthy: Bool, reason: String) {
        self.isHealthy = isHealthy
        self.reason = reason
    }

    public var description: String { "\(isHealthy ? "healthy" : "unhealthy"): \(reason)" }

    /// The loop must have woken within this long.
    public static let loopTurnLimit = Duration.seconds(1)

    /// What the engine knows, turned into an answer. Pure: the engine passes its state and the loop's clock.
    /// - Parameters:
    ///   - lastLoopWake: when the loop last came back from waiting (nil: it has not run yet).
    ///   - flipPendingSince: when the pending flip was queued, nil with no flip pending.
    ///   - flipTimeout: how long a flip may take (see `LayerEngine.flipTimeout`).
    ///   - screen: the screen's problem (black, frozen) with its reason, and whether it makes the signal unhealthy.
    public static func evaluate(now: MonotonicInstant, lastLoopWake: MonotonicInstant?, flipPendingSince: MonotonicInstant?,
                                flipTimeout: Duration, waitingForMaster: Bool, fatal: String?,
                                screen: (reason: String, restarts: Bool)? = nil) -> FrameHealth {
        if let fatal { return FrameHealth(isHealthy: false, reason: fatal) }
        if let lastLoopWake, now - lastLoopWake > loopTurnLimit {
            return FrameHealth(isHealthy: false, reason: "the main loop has not turned for \(Int((now - lastLoopWake).milliseconds)) ms")
        }
        if let since = flipPendingSince, now - since > flipTimeout {
            return FrameHealth(isHealthy: false, reason: "a flip is overdue by \(Int((now - since - flipTimeout).milliseconds)) ms")
        }
        if waitingForMaster { return FrameHealth(isHealthy: true, reason: "waiting for DRM master") }
        // A black or frozen screen (`ScreenWatch`): unhealthy only when `health.restart_on` names it.
        if let screen { return FrameHealth(isHealthy: !screen.restarts, reason: screen.reason) }
        return FrameHealth(isHealthy: true, reason: "ok")
    }
}
