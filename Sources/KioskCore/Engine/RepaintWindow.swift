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

    /// Whether a flip at `flipped` missed the vblank `target` it was presented for.
    public static func missed(_ target: MonotonicInstant, flipped: MonotonicInstant, frame: Duration) -> Bool {
        flipped > target + frame / 2
    }
}

/// The engine's repaint window: the lead, the last vblank of the output attached, the timer that wakes the loop
/// when a deferred present is due, and how late presents went out. A value owned by one `LayerEngine`, on the main
/// thread.
///
/// The lead adapts to the machine, like a compositor's render-time estimate: a present made when its window opened
/// is timed until the backend took it, and the lead is at least that lateness plus `RepaintWindow.margin`; a flip
/// that missed the vblank its present aimed at widens it to a whole frame (presents at once, as without a window).
/// The lateness decays by 1/256 a flip (a half-life of about 3 s at 60 Hz): a machine that made a present late once
/// is likely to again soon, so the window narrows back slowly and a load that comes and goes costs few frames.
struct RepaintSchedule {
    /// The configured lead (`LayerEngine.repaintWindow`); zero, the default, is no window.
    var lead = Duration.zero
    /// The timestamp of the last flip on the output attached now, if something animated when it completed; nil
    /// after a modeset, a reacquire or an attach.
    var lastVblank: MonotonicInstant?
    /// Armed while a present waits for its window.
    var timer: TimerHandle?
    /// Set when the timer fired: the next present is the one that waited, and its lateness is measured.
    var windowOpenedAt: MonotonicInstant?
    /// The vblank the last present made in a window aimed at, until its flip.
    var target: MonotonicInstant?
    /// How late presents made in a window went out (a maximum that decays).
    var lateness = Duration.zero

    mutating func cancel() {
        timer?.cancel()
        timer = nil
        windowOpenedAt = nil
    }

    /// Forgets the output's vblank (another output, a modeset) and the timer; the measured lateness stays.
    mutating func reset() {
        cancel()
        lastVblank = nil
        target = nil
    }

    /// The lead in use: the configured one, widened to the measured lateness and margin. Zero configured: none.
    func effectiveLead(frame: Duration) -> Duration {
        guard lead > .zero else { return .zero }
        return max(lead, lateness == .zero ? .zero : lateness + RepaintWindow.margin)
    }

    /// A flip completed at `timestamp`: a missed target widens the lead to a frame; otherwise the lateness decays.
    mutating func flipped(at timestamp: MonotonicInstant, frame: Duration) {
        if let target, RepaintWindow.missed(target, flipped: timestamp, frame: frame) {
            lateness = max(lateness, frame)
        } else {
            lateness = lateness - lateness / 256
        }
        target = nil
        windowOpenedAt = nil
    }
}

extension LayerEngine {
    /// How long before the predicted vblank a frame is presented while something animates (see `RepaintWindow`);
    /// widened while presents go out late. Zero, the default, presents every frame as soon as it is composed:
    /// `RepaintWindow.lead(for:)` is the lead to use, but with it kioskd on vkms in the VM missed 17 to 66 of 300
    /// vblanks against 7 to 13 without (docs/design.md), so nothing turns it on until that is understood.
    public var repaintWindow: Duration {
        get { repaint.lead }
        set { repaint.lead = max(newValue, .zero) }
    }

    /// Whether a present wanted now waits for the repaint window: only while the display link has live targets,
    /// so the output flips at every vblank and a flip queued now would hold back what lands before the vblank. An
    /// idle output presents at once: its flip lands on the next vblank either way. Arms the timer that wakes the
    /// loop when the window opens; the commit observer presents then. When the present goes out now, the vblank it
    /// aims at is noted (`repaintPresented`).
    func presentWaitsForRepaintWindow() -> Bool {
        let frame = displayLink.frameDuration
        guard displayLink.isActive, let lastVblank = repaint.lastVblank,
              let slot = RepaintWindow.slot(now: loop.now, lastVblank: lastVblank, frame: frame,
                                            lead: repaint.effectiveLead(frame: frame)) else {
            repaint.cancel()
            repaint.target = nil
            return false
        }
        guard slot.presentAt > loop.now else {
            repaint.timer?.cancel()
            repaint.timer = nil
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
        }
        return true
    }

    /// A present went out: if it is the one that waited for its window, how late it went out widens the lead.
    func repaintPresented() {
        guard let opened = repaint.windowOpenedAt else { return }
        repaint.windowOpenedAt = nil
        repaint.lateness = min(max(repaint.lateness, loop.now - opened), displayLink.frameDuration)
    }
}
