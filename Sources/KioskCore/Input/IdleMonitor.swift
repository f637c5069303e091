/// When an idle screen dims and blanks: the `idle` settings (`dim_after`, `dim_level`, `blank_after`). A plain
/// value, checked by `validated()`.
public struct IdleSettings: Sendable, Equatable {
    /// Seconds without input before the backlight dims; nil never dims.
    public var dimAfter: Double?
    /// The dimmed brightness as a share of the normal one, 0...1.
    public var dimLevel: Double
    /// Seconds without input before the output blanks; nil never blanks.
    public var blankAfter: Double?

    public init(dimAfter: Double? = nil, dimLevel: Double = 0.2, blankAfter: Double? = nil) {
        self.dimAfter = dimAfter
        self.dimLevel = dimLevel
        self.blankAfter = blankAfter
    }

    /// Whether any of it is on.
    public var isEnabled: Bool { dimAfter != nil || blankAfter != nil }

    /// The settings, or an error naming the value that cannot work.
    public func validated() throws(IdleSettingsError) -> IdleSettings {
        if let dimAfter, !(dimAfter > 0 && dimAfter.isFinite) { throw IdleSettingsError("idle.dim_after \(dimAfter): must be a positive number of seconds") }
        if let blankAfter, !(blankAfter > 0 && blankAfter.isFinite) { throw IdleSettingsError("idle.blank_after \(blankAfter): must be a positive number of seconds") }
        guard (0...1).contains(dimLevel) else { throw IdleSettingsError("idle.dim_level \(dimLevel): must be between 0 and 1") }
        if let dimAfter, let blankAfter, blankAfter <= dimAfter {
            throw IdleSettingsError("idle.blank_after \(blankAfter) must come after idle.dim_after \(dimAfter)")
        }
        return self
    }
}

public struct IdleSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The screen's idle state: `stats`, `display.info` and `power` events report it.
public enum ScreenIdleState: String, Sendable, Equatable {
    case active, dimmed, blanked
}

/// Counts idle time on the loop's clock and moves the screen from active to dimmed to blanked; any user input
/// makes it active again. `noteActivity()` answers whether that input woke the screen, so the caller can swallow
/// it: the touch that wakes a dark screen must not press whatever is under the finger. What dimming and blanking
/// do is the caller's (`onChange`): the monitor only decides when.
///
/// One timer at a time, re-armed only when it fires, so a stream of motion events costs no timer work. Lives on
/// the main thread with its loop.
public final class IdleMonitor {
    public let settings: IdleSettings
    public private(set) var state: ScreenIdleState = .active
    /// Called with the old and the new state and the reason (`idle`, `input`, or the caller's own in `wake`).
    public var onChange: ((_ from: ScreenIdleState, _ to: ScreenIdleState, _ reason: String) -> Void)?

    private let loop: MainLoop
    private var lastActivity: MonotonicInstant
    private var timer: TimerHandle?

    public init(loop: MainLoop, settings: IdleSettings) {
        self.loop = loop
        self.settings = settings
        lastActivity = loop.now
        arm()
    }

    deinit { timer?.cancel() }

    /// Seconds since the last input.
    public var idleSeconds: Double { Double((loop.now - lastActivity).nanosecondsClamped) / 1e9 }

    /// Input happened now: the idle time starts again. Returns true when the screen was dimmed or blanked and this
    /// input woke it (the caller swallows the input).
    @discardableResult
    public func noteActivity() -> Bool {
        lastActivity = loop.now
        guard state != .active else { return false }
        change(to: .active, reason: "input")
        arm()
        return true
    }

    /// Lights the screen for a reason other than input (`display.power`, `kioskctl power on`): the idle time starts
    /// again.
    public func wake(reason: String) {
        lastActivity = loop.now
        if state != .active { change(to: .active, reason: reason) }
        arm()
    }

    /// Blanks the screen for a reason other than idle time (`display.power off`): the next input wakes it and is
    /// swallowed, as after an idle blank.
    public func blank(reason: String) {
        if state != .blanked { change(to: .blanked, reason: reason) }
        arm()
    }

    /// The state the idle time calls for.
    private func dueState() -> ScreenIdleState {
        let idle = idleSeconds
        if let blank = settings.blankAfter, idle >= blank { return .blanked }
        if let dim = settings.dimAfter, idle >= dim { return .dimmed }
        return .active
    }

    /// The next deadline after which the state changes without input, from the last input.
    private func nextDeadline() -> MonotonicInstant? {
        let steps: [Double] = switch state {
        case .active: [settings.dimAfter, settings.blankAfter].compactMap { $0 }
        case .dimmed: [settings.blankAfter].compactMap { $0 }
        case .blanked: []
        }
        guard let seconds = steps.min() else { return nil }
        return lastActivity + .nanoseconds(Int64(seconds * 1e9))
    }

    private func arm() {
        guard let deadline = nextDeadline() else {
            timer?.cancel()
            timer = nil
            return
        }
        if timer?.nextDeadline == deadline { return }
        timer?.cancel()
        timer = loop.addTimer(at: deadline) { [weak self] in self?.fired() }
    }

    private func fired() {
        timer = nil
        let due = dueState()
        if due != state, due != .active { change(to: due, reason: "idle") }
        arm()
    }

    private func change(to new: ScreenIdleState, reason: String) {
        let old = state
        state = new
        onChange?(old, new, reason)
    }
}
