import Logging

private let repaintLogger = Logger(label: "kioskd.engine")

/// When a frame is presented while the output flips at every vblank (weston's repaint window, `repaint-window` in
/// weston.ini): not as soon as it is composed, but `lead` before the vblank it is meant for, predicted from the last
/// flip's timestamp and the refresh period. A flip queued at once would hold the output until that vblank, so a
/// render that lands a moment later would wait for it and then for the vblank after; queued just before the vblank,
/// the present carries everything that landed until then. So a result waits at most one refresh period and the lead
/// before it is on screen, instead of two periods. Pure functions of plain values.
public enum RepaintWindow {
    /// The least lead `lead(for:)` suggests: a copy of the frame's damage into the scanout buffer and a non-blocking
    /// commit must be done by the vblank. The engine widens its lead while its presents are late (`RepaintSchedule`).
    public static let defaultLead = Duration.milliseconds(4)
    /// Added to the lateness measured when the lead is widened for it.
    public static let margin = Duration.milliseconds(1)
    /// The work cost (`RepaintSchedule.workCost`) loses 1/`workCostDecay` of itself at each flip.
    static let workCostDecay: Int64 = 64
    /// How long presents go out at once after a present went out within `closeCall(for:)` of its vblank or a flip
    /// missed the vblank its present aimed at. Each further one within `settleTime` of the one before doubles the
    /// hold, up to `maximumHold`.
    public static let firstHold = Duration.seconds(1)
    public static let maximumHold = Duration.seconds(64)
    public static let settleTime = Duration.seconds(10)
    /// After a close, the window opens again only once the hold has passed and the output has also flipped at every
    /// vblank for this long with presents going out at once: a machine that misses vblanks without the window (a
    /// loaded host, an emulated CPU) would miss more with it, so there it stays closed.
    public static let quietStretch = Duration.milliseconds(500)

    /// Whether, and with which lead, an engine uses the window (`repaint_window` in the config, `--repaint-window`).
    public enum Mode: Equatable, Sendable, CustomStringConvertible {
        /// Every frame is presented as soon as it is composed.
        case off
        /// `lead(for:)` of the attached output's refresh period.
        case auto
        /// A fixed lead (widened while presents go out late, like `auto`'s).
        case lead(Duration)

        /// The lead for an output refreshing every `frame`; zero when off.
        public func lead(for frame: Duration) -> Duration {
            switch self {
            case .off: .zero
            case .auto: RepaintWindow.lead(for: frame)
            case .lead(let lead): max(lead, .zero)
            }
        }

        /// `off`, `auto`, or milliseconds (`0` is `off`), as the config and the command line spell it.
        public init?(_ text: String) {
            switch text.lowercased() {
            case "off", "0": self = .off
            case "auto": self = .auto
            default:
                guard let ms = Double(text), ms.isFinite, ms > 0, ms < 1000 else { return nil }
                self = .lead(.microseconds(Int64((ms * 1000).rounded())))
            }
        }

        public var description: String {
            switch self {
            case .off: "off"
            case .auto: "auto"
            case .lead(let lead): "\(Double(lead.nanosecondsClamped) / 1e6) ms"
            }
        }
    }

    /// A quarter of `frame`, at least `defaultLead` and at most half of `frame`: 4.2 ms at 60 Hz, 12.5 ms at 20 Hz.
    /// A slow refresh leaves time to spare, and a loop woken late misses fewer vblanks with it.
    public static func lead(for frame: Duration) -> Duration {
        min(max(defaultLead, frame / 4), frame / 2)
    }

/// The vblank a frame ready now can reach, and when to present it for that vblank.
    public struct Slot: Equatable, Sendable {
        public var vblank: MonotonicInstant
        public var presentAt: MonotonicInstant

        public init(vblank: MonotonicInstant, presentAt: MonotonicInstant) {
            self.vblank = vblank
            self.presentAt = presentAt
        }
    }

    /// The slot for a frame ready at `now`, on an output whose last flip completed at `lastVblank` and refreshes
    /// every `frame`: the first vblank after `now`, presented `lead` before it. A `presentAt` not after `now` means
    /// at once (inside the window the present may still make that vblank). Nil, to present at once with no vblank
    /// in view, when there is no window (`lead` zero, or a frame or more) or the last vblank is too old to predict
    /// from (two periods or more ago: the output was idle, off or set again since).
    public static func slot(now: MonotonicInstant, lastVblank: MonotonicInstant, frame: Duration,
                            lead: Duration) -> Slot? {
        guard frame > .zero, lead > .zero, lead < frame, now >= lastVblank else { return nil }
        let elapsed = now - lastVblank
        guard elapsed < frame * 2 else { return nil }
        let vblank = lastVblank + frame * (elapsed < frame ? 1 : 2)
        return Slot(vblank: vblank, presentAt: vblank + (.zero - lead))
    }

    /// How close to its vblank a present made in a window may go out before it counts as a near miss: 1 ms, or a
    /// sixteenth of `frame` where that is more (1.04 ms at 60 Hz, 3.1 ms at 20 Hz). The time is taken when the
    /// backend has taken the commit; what is left is the driver's share (a nonblocking commit's worker, the vblank
    /// interrupt), which a busy machine can delay by about that much. docs/bench-log.md (issue 28 item 9) has the
    /// measurement behind it.
    public static func closeCall(for frame: Duration) -> Duration {
        max(.milliseconds(1), frame / 16)
    }

    /// Whether a present made in a window for a vblank `slack` away (negative: after it) came too close to missing
    /// it: less than `closeCall(for:)` left. A present late against the window's own estimate (the loop woke late,
    /// the copy took longer than the lead) that still left that much makes its vblank, and keeps the window open.
    public static func isNearMiss(slack: Duration, frame: Duration) -> Bool {
        slack < closeCall(for: frame)
    }

    /// Whether a flip at `flipped` missed the vblank `target` it was presented for.
    public static func missed(_ target: MonotonicInstant, flipped: MonotonicInstant, frame: Duration) -> Bool {
        flipped > target + frame / 2
    }
}

/// The engine's repaint window: the lead, the last vblank of the output attached, the timer that wakes the loop
/// when a deferred present is due, and how late presents went out. A value owned by one `LayerEngine`, on the main
/// thread.
///
/// The lead adapts to the machine, like a compositor's render-time estimate, from two measures, and is at least the
/// longer of them plus `RepaintWindow.margin`:
/// - the lateness: a present that waited for its window, timed from the window's opening until the backend took it.
///   It decays by 1/1024 a flip (a half-life of about 12 s at 60 Hz): a machine that made a present late once is
///   likely to again.
/// - the work cost: every commit that composed or presented, wherever it ran, so a frame that costs as much as one
///   did before makes its vblank before any present has been late. It decays by 1/`RepaintWindow.workCostDecay` a
///   flip (a half-life of about 0.7 s at 60 Hz): one heavy commit (a new page composed whole, well before its window)
///   says little about the frames after it, and while heavy frames go on (a fade) each teaches it again.
///
/// The window closes itself when its presents miss or nearly miss their vblank: a flip that missed the vblank its
/// present aimed at, or a present that went out within `RepaintWindow.closeCall(for:)` of it
/// (`RepaintWindow.isNearMiss`), closes it for a hold (`RepaintWindow.firstHold`, doubled for each such event that
/// follows within `settleTime` of the one before, up to `RepaintWindow.maximumHold`): presents go out at once
/// meanwhile, as without a window, so a machine whose loop cannot keep time (a loaded host, an emulated CPU) pays at
/// most one missed vblank a close, and the closes come further apart each time. A present that went out later than
/// the window meant but still with time to spare does not close it: it only widens the lead.
struct RepaintSchedule {
    /// The configured window (`LayerEngine.repaintWindowMode`); `.off`, the engine's default, is no window.
    var mode = RepaintWindow.Mode.off
    /// The timestamp of the last flip on the output attached now, if something animated when it completed; nil
    /// after a modeset, a reacquire or an attach.
    var lastVblank: MonotonicInstant?
    /// Armed while a present waits for its window.
    var timer: TimerHandle?
    /// Set when the timer fired: the next present is the one that waited, and its lateness is measured.
    var windowOpenedAt: MonotonicInstant?
    /// The vblank a present waiting for its window is for, from when its timer is armed until it goes out.
    var awaited: MonotonicInstant?
    /// The vblank the last present made in a window aimed at, until its flip.
    var target: MonotonicInstant?
    /// How long before `target` that present went out (negative: after it), for the log at its flip.
    var targetSlack: Duration?
    /// How late presents made in a window went out (a maximum that decays).
    var lateness = Duration.zero
    /// What commits that composed or presented cost, wherever they ran (a maximum that decays fast).
    var workCost = Duration.zero
    /// After a missed vblank: presents go out at once until then.
    var heldUntil: MonotonicInstant?
    /// The length of the last hold (zero: none since the last miss that came alone).
    var hold = Duration.zero
    /// When the window last closed itself (a near miss or a missed target).
    var lastClose: MonotonicInstant?
    /// Flips that missed the vblank their present aimed at.
    var misses = 0
    /// Presents made in a window that nearly missed their vblank (`RepaintWindow.isNearMiss`).
    var nearMisses = 0
    /// Flips in a row, while something animates, each at the vblank after the one before (none missed).
    var flipsInARow = 0
    /// Set by a close: the window stays closed until `RepaintWindow.quietStretch` of flips in a row.
    var awaitsQuietStretch = false

    mutating func cancel() {
        timer?.cancel()
        timer = nil
        windowOpenedAt = nil
        awaited = nil
    }

    /// Forgets the output's vblank (another output, a modeset) and the timer; the measured lateness stays.
    mutating func reset() {
        cancel()
        lastVblank = nil
        target = nil
        targetSlack = nil
    }

    /// The lead in use at `now`: the configured one, widened to the measured lateness and margin; zero when off or
    /// closed for a hold (a near miss or a miss).
    func effectiveLead(frame: Duration, now: MonotonicInstant) -> Duration {
        let configured = mode.lead(for: frame)
        guard configured > .zero else { return .zero }
        if let heldUntil, now < heldUntil { return .zero }
        if awaitsQuietStretch, frame * flipsInARow < RepaintWindow.quietStretch {
            return .zero
        }
        let measured = max(lateness, workCost)
        return max(configured, measured == .zero ? .zero : measured + RepaintWindow.margin)
    }

    /// The window closes itself at `now` for a hold: `firstHold`, or twice the last hold when the last close was
    /// within `settleTime`.
    mutating func close(at now: MonotonicInstant) {
        if let lastClose, now < lastClose + RepaintWindow.settleTime, hold > .zero {
            hold = min(hold * 2, RepaintWindow.maximumHold)
        } else {
            hold = RepaintWindow.firstHold
        }
        heldUntil = now + hold
        lastClose = now
        awaitsQuietStretch = true
    }

    /// A present that waited for its window went out `late` after the window opened: the lateness widens the lead
    /// for the presents after it. Closing is for `presented(at:frame:)` to judge, by what was left before the vblank.
    mutating func waited(late: Duration, frame: Duration) {
        lateness = min(max(lateness, late), frame)
    }

    /// A present made in a window for `target` went out at `now`: one that left less than
    /// `RepaintWindow.closeCall(for:)` before its vblank closes the window (`RepaintWindow.isNearMiss`).
    mutating func presented(at now: MonotonicInstant, frame: Duration) {
        guard let target else { return }
        let slack = target - now
        targetSlack = slack
        if RepaintWindow.isNearMiss(slack: slack, frame: frame) {
            nearMisses += 1
            close(at: now)
        }
    }

    /// A flip completed at `timestamp`. A missed target closes the window for a hold (unless the near miss that
    /// missed it closed it already); otherwise the lateness decays. The work cost decays at every flip. A flip more
    /// than a vblank after the one before it, while something animated (`lastVblank`, not yet updated), breaks the
    /// flips in a row that a closed window waits for.
    mutating func flipped(at timestamp: MonotonicInstant, frame: Duration) {
        if let lastVblank {
            flipsInARow = timestamp - lastVblank > frame * 3 / 2 ? 0 : flipsInARow + 1
            if frame * flipsInARow >= RepaintWindow.quietStretch { awaitsQuietStretch = false }
        }
        if let target, RepaintWindow.missed(target, flipped: timestamp, frame: frame) {
            misses += 1
            if heldUntil.map({ timestamp >= $0 }) ?? true { close(at: timestamp) }
        } else {
            lateness = lateness - lateness / 1024
        }
        if let target, let targetSlack {
            repaintLogger.debug("repaint window: present \(hundredths(targetSlack)) ms before its vblank, flip \(hundredths(timestamp - target)) ms after it")
        }
        workCost = workCost - workCost / RepaintWindow.workCostDecay
        target = nil
        targetSlack = nil
        windowOpenedAt = nil
    }
}

/// Milliseconds to two decimals, for the log.
private func hundredths(_ d: Duration) -> Double { (d.milliseconds * 100).rounded() / 100 }

extension LayerEngine {
    /// Whether frames are presented a lead before the predicted vblank while something animates (see
    /// `RepaintWindow`). `.off`, the engine's and kioskd's default, presents every frame as soon as it is composed;
    /// kioskd sets what `repaint_window` or `--repaint-window` says.
    public var repaintWindowMode: RepaintWindow.Mode {
        get { repaint.mode }
        set { repaint.mode = newValue }
    }

    /// The configured lead at the attached output's refresh period; zero when off. Setting it sets a fixed lead
    /// (`.lead`), zero `.off`.
    public var repaintWindow: Duration {
        get { repaint.mode.lead(for: displayLink.frameDuration) }
        set { repaint.mode = newValue > .zero ? .lead(newValue) : .off }
    }

    /// The lead in use now: the configured one widened while presents go out late; zero when off, or closed for
    /// a hold after a near miss or a missed vblank.
    public var repaintLead: Duration { repaint.effectiveLead(frame: displayLink.frameDuration, now: loop.now) }

    /// Flips that missed the vblank their repaint window aimed at.
    public var repaintWindowMisses: Int { repaint.misses }

    /// Presents made in a repaint window that nearly missed their vblank (`RepaintWindow.isNearMiss`), each closing
    /// the window.
    public var repaintWindowNearMisses: Int { repaint.nearMisses }

    /// The vblank at which a change to the layers made at `now` is expected on screen, for a change that must flip
    /// at a given time (a sync group's page turn): with a repaint window open, the vblank of its slot; else, with a
    /// flip on its way (the one presented at the last flip, while something animates), the vblank after the one
    /// that flip lands on; else the first vblank after `now` (an idle output presents at once). A flip still pending
    /// past the vblank it was aimed at has landed there, its event not read yet (a loop woken late): the change then
    /// goes out as soon as the event is read, at the first vblank after `now`. Nil before the first flip. Renders
    /// the change needs are not counted: it is for changes whose content is rendered already.
    public func expectedVblank(forChangeAt now: MonotonicInstant) -> MonotonicInstant? {
        guard let lastFlip = lastFlipTime else { return nil }
        let frame = displayLink.frameDuration
        guard frame > .zero else { return nil }
        if displayLink.isActive, let lastVblank = repaint.lastVblank,
           let slot = RepaintWindow.slot(now: now, lastVblank: lastVblank, frame: frame, lead: repaint.effectiveLead(frame: frame, now: now)),
           backend?.isFlipPending != true {
            return slot.vblank
        }
        // The first vblank of the grid strictly after `now`.
        let periods = now > lastFlip ? (now - lastFlip).nanosecondsClamped / frame.nanosecondsClamped + 1 : 1
        let next = lastFlip + frame * Int(periods)
        // A pending flip lands at the vblank after the last one; until then, the change comes one vblank after it.
        let pendingLands = lastFlip + frame
        return backend?.isFlipPending == true && now < pendingLands ? next + frame : next
    }

    /// Whether a present wanted now waits for the repaint window: only while the display link has live targets,
    /// so the output flips at every vblank and a flip queued now would hold back what lands before the vblank. An
    /// idle output presents at once: its flip lands on the next vblank either way. Arms the timer that wakes the
    /// loop when the window opens; the commit observer presents then. When the present goes out now, the vblank it
    /// aims at is noted (`repaintPresented`).
    func presentWaitsForRepaintWindow() -> Bool {
        let frame = displayLink.frameDuration
        if let awaited = repaint.awaited, RepaintWindow.isNearMiss(slack: awaited - loop.now, frame: frame) {
            // The loop woke too late for the vblank the present waited for: past it (a vblank without a flip,
            // which waiting for the next window would not even count) or within a close call of it. A near miss:
            // the window closes, and the present goes out at once.
            repaint.awaited = nil
            repaint.nearMisses += 1
            repaint.close(at: loop.now)
            // How late it woke widens the lead, whether the window's timer or another wake-up came first.
            if let opened = repaint.windowOpenedAt ?? repaint.timer?.nextDeadline, opened <= loop.now {
                repaint.waited(late: loop.now - opened, frame: frame)
            }
        }
        guard displayLink.isActive, let lastVblank = repaint.lastVblank,
              let slot = RepaintWindow.slot(now: loop.now, lastVblank: lastVblank, frame: frame,
                                            lead: repaint.effectiveLead(frame: frame, now: loop.now)) else {
            repaint.cancel()
            repaint.target = nil
            return false
        }
        guard slot.presentAt > loop.now else {
            // A present that waited goes out now: how late it goes out is measured from when its window opened,
            // whether the timer woke the loop or another wake-up came first.
            if repaint.timer != nil {
                repaint.windowOpenedAt = slot.presentAt
            }
            repaint.timer?.cancel()
            repaint.timer = nil
            repaint.awaited = nil
            repaint.target = slot.vblank
            return false
        }
        if repaint.timer?.nextDeadline != slot.presentAt {
            repaint.cancel()
            repaint.timer = loop.addTimer(at: slot.presentAt) { [weak self] in
                guard let self else { return }
                repaint.timer = nil
                repaint.windowOpenedAt = slot.presentAt
            }
            repaint.awaited = slot.vblank
        }
        return true
    }

    /// Whether a composition wanted now waits for the repaint window (and is made when it opens): only while no
    /// flip is pending and the present it feeds would wait for the window (`presentWaitsForRepaintWindow`).
    func composeWaitsForRepaintWindow() -> Bool {
        guard repaint.mode != .off, presentsEnabled, !presentsHeldByFault, let backend, !backend.isFlipPending,
              presentWaitsForRepaintWindow(), let opens = repaint.timer?.nextDeadline else {
            return false
        }
        // Far enough from the window, composing now is done before it opens, and the window is left with the copy
        // and the commit; within a lead of it, the composition waits for it.
        return opens - loop.now < repaint.effectiveLead(frame: displayLink.frameDuration, now: loop.now)
    }

    /// Composing and presenting took `duration` in one commit: the lead is at least that and the margin while the work
    /// cost lasts, so a frame that costs as much as one did before makes its vblank (the window opening is where the
    /// composition it deferred is made).
    func repaintWorkDone(_ duration: Duration) {
        repaint.workCost = min(max(repaint.workCost, duration), displayLink.frameDuration)
    }

    /// A present went out: if it is the one that waited for its window, how late it went out widens the lead; if
    /// it was made in a window, one that nearly missed its vblank closes the window (`RepaintSchedule.presented`).
    func repaintPresented() {
        let frame = displayLink.frameDuration
        if let opened = repaint.windowOpenedAt {
            repaint.windowOpenedAt = nil
            repaint.waited(late: loop.now - opened, frame: frame)
        }
        repaint.presented(at: loop.now, frame: frame)
    }
}
