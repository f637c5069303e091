import Foundation

/// When an idle screen dims and blanks: the `idle` settings (`dim_after`, `dim_level`, `blank_after`, `schedule`).
/// A plain value, checked by `validated()`.
public struct IdleSettings: Sendable, Equatable {
    /// Seconds without input before the backlight dims; nil never dims.
    public var dimAfter: Double?
    /// The dimmed brightness as a share of the normal one, 0...1.
    public var dimLevel: Double
    /// Seconds without input before the output blanks; nil never blanks.
    public var blankAfter: Double?
    /// When the screen is off by the clock; nil (or no entries): never.
    public var schedule: ScreenSchedule?

    public init(dimAfter: Double? = nil, dimLevel: Double = 0.2, blankAfter: Double? = nil, schedule: ScreenSchedule? = nil) {
        self.dimAfter = dimAfter
        self.dimLevel = dimLevel
        self.blankAfter = blankAfter
        self.schedule = schedule
    }

    /// Whether any of it is on.
    public var isEnabled: Bool { dimAfter != nil || blankAfter != nil || hasSchedule }

    var hasSchedule: Bool { !(schedule?.entries.isEmpty ?? true) }

    /// Seconds a screen woken by input inside a scheduled off time stays lit without further input, when
    /// `blank_after` does not say.
    public static let scheduledOffRelight = 60.0

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

/// The screen's idle state: `stats`, `output.info` and `power` events report it.
public enum ScreenIdleState: String, Sendable, Equatable {
    case active, dimmed, blanked
}

/// Counts idle time on the loop's clock and moves the screen from active to dimmed to blanked; any user input
/// makes it active again. With a schedule, the screen also blanks when an off time begins and lights when it ends;
/// input inside an off time wakes it as it would an idle blank, and it blanks again after `blank_after` (else
/// `IdleSettings.scheduledOffRelight` seconds) without input. The timetable is read on the wall clock
/// (`wallClock`), checked at each change and at least every minute, so a clock set late (NTP at boot) or a
/// suspend is caught up within a minute. `noteActivity()` answers whether that input woke the screen, so the caller can swallow
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

    /// Whether the schedule has the screen off now.
    public private(set) var isScheduledOff = false

    private let loop: MainLoop
    private let wallClock: () -> Date
    private var lastActivity: MonotonicInstant
    private var timer: TimerHandle?
    private var scheduleTimer: TimerHandle?

    /// `wallClock` is read for the schedule only (tests give one that follows the manual loop's clock).
    public init(loop: MainLoop, settings: IdleSettings, wallClock: @escaping () -> Date = { Date() }) {
        self.loop = loop
        self.settings = settings
        self.wallClock = wallClock
        lastActivity = loop.now
        arm()
        // The first look at the timetable is on the loop's first turn, after the caller has set `onChange`.
        if settings.hasSchedule { scheduleTimer = loop.addTimer(at: loop.now) { [weak self] in self?.scheduleFired() } }
    }

    deinit {
        timer?.cancel()
        scheduleTimer?.cancel()
    }

    /// Longest wait between two looks at the wall clock.
    static let scheduleCheckInterval = 60.0

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

    /// Lights the screen for a reason other than input (`output.power`, `kioskctl power on`): the idle time starts
    /// again.
    public func wake(reason: String) {
        lastActivity = loop.now
        if state != .active { change(to: .active, reason: reason) }
        arm()
    }

    /// Blanks the screen for a reason other than idle time (`output.power off`): the next input wakes it and is
    /// swallowed, as after an idle blank.
    public func blank(reason: String) {
        if state != .blanked { change(to: .blanked, reason: reason) }
        arm()
    }

    /// Seconds without input before blanking now: inside a scheduled off time, never longer than a minute.
    private var blankAfter: Double? {
        isScheduledOff ? settings.blankAfter ?? IdleSettings.scheduledOffRelight : settings.blankAfter
    }

    /// The state the idle time calls for.
    private func dueState() -> ScreenIdleState {
        let idle = idleSeconds
        if let blank = blankAfter, idle >= blank { return .blanked }
        if let dim = settings.dimAfter, idle >= dim { return .dimmed }
        return .active
    }

    /// The next deadline after which the state changes without input, from the last input.
    private func nextDeadline() -> MonotonicInstant? {
        let steps: [Double] = switch state {
        case .active: [settings.dimAfter, blankAfter].compactMap { $0 }
        case .dimmed: [blankAfter].compactMap { $0 }
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

    private func scheduleFired() {
        scheduleTimer = nil
        guard let schedule = settings.schedule else { return }
        let now = wallClock()
        let off = schedule.isOff(at: now)
        if off != isScheduledOff {
            isScheduledOff = off
            if off { blank(reason: "schedule") } else { wake(reason: "schedule") }
        }
        var wait = Self.scheduleCheckInterval
        if let next = schedule.nextChange(after: now) { wait = min(wait, next.timeIntervalSince(now)) }
        // A millisecond past the change, so the look after it sees the new state.
        scheduleTimer = loop.addTimer(at: loop.now + .nanoseconds(Int64((max(wait, 0) + 0.001) * 1e9))) { [weak self] in
            self?.scheduleFired()
        }
    }

    private func change(to new: ScreenIdleState, reason: String) {
        let old = state
        state = new
        onChange?(old, new, reason)
    }
}
