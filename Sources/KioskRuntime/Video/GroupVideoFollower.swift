import KioskCore

/// Keeps one video widget's decoder on the sync group's clock (`GroupVideoClock`): once the group's time is known,
/// each frame is handed to the pacer with its group due time (before, it plays at the decoder's own time). While the
/// decoder is outside the clock's window (a member that joins, restarts or learns the group's time late; a decoder
/// that was on the group must stay out for `framesBeforeSeek` frames), the widget is asked to move it to the position
/// the group will be at when the move is done (`Move`: a seek, or in a playlist another item opened, or taken over
/// from the one opened ahead). How long each kind of move takes is learnt from the first frame after each: the next
/// aims that much ahead, plus 40 ms so that the frames arrive a little early and wait for their vblank. Until the
/// frame a move asked for comes (or 2 s), no other is asked for.
///
/// Also keeps, for `video.state`, the decoder's phase against the group and the error of each shown frame's vblank
/// against its group due (the last 128 of each), and the seeks made.
///
/// Main thread, owned by one `VideoSlot`.
final class GroupVideoFollower {
    /// How the decoder is moved to the group's position: a seek in the clip it has open, or (a playlist's other
    /// item) a new clip opened and sought. Each has its own learnt time: opening builds a pipeline first.
    enum Move: Sendable, Equatable {
        case seek
        case open
        /// The item was opened ahead and is paused: sought and played.
        case resume
    }

    /// The expected time from a seek to its first frame being due; learnt from each seek.
    private(set) var seekTime: Duration = .milliseconds(150)
    /// The same for an item opened at a position; learnt from each.
    private(set) var openTime: Duration = .milliseconds(300)
    /// The same for an item opened ahead, paused, then sought and played; learnt from each.
    private(set) var resumeTime: Duration = .milliseconds(150)
    /// The cycle position asked for, how, and when.
    private var pendingSeek: (target: Int64, move: Move, issued: MonotonicInstant)?
    private(set) var seeks = 0
    /// The decoder's phase against the group (group due minus the decoder's due), ns.
    private(set) var phases: [Int64] = []
    /// The vblank each frame was picked for minus its group due, ns: how far from its group time a frame shows.
    private(set) var vblankErrors: [Int64] = []
    static let kept = 128
    /// Frames the group timed (the others played free).
    private(set) var framesOnGroup = 0
    /// Frames in a row outside the window, and how many make a seek.
    private var outOfWindow = 0
    static let framesBeforeSeek = 4
    /// Aimed for: frames a little early, waiting for their vblank in the pacer.
    static let aheadMargin: Int64 = 40_000_000

    /// What to do with a frame from the decoder: the frame to pace (group-timed, or as it came), and whether the
    /// decoder is to be moved to the group's position (it is outside the window; the widget then asks `target`
    /// where to, and says so with `requestSeek`). `duration` is the clip's (a playlist's cycle), ns.
    func follow(_ frame: VideoFrame, clock: GroupVideoClock, duration: Int64, timeline: GroupTimeline,
                now: MonotonicInstant) -> (frame: VideoFrame, move: Bool) {
        let position = clock.itemStart + Int64(clamping: frame.timestamp.nanosecondsClamped)
        // Once the group's time is known every frame is due at its group time, on the group or not: one the
        // decoder brings late shows at the next vblank, one it brings early waits.
        guard duration > 0, let (mapped, phase) = clock.map(frame, duration: duration, timeline: timeline) else { return (frame, false) }
        var firstAfterSeek = false
        if let pending = pendingSeek {
            let step = max(Int64(clamping: frame.duration.nanosecondsClamped), 1_000_000)
            if abs(position - pending.target) < step + step / 2 {
                pendingSeek = nil
                firstAfterSeek = true
                // The move came `phase` later than aimed for (negative: earlier): aim that much further next time.
                let next = Int64(clamping: time(of: pending.move).nanosecondsClamped) - phase + Self.aheadMargin
                let time = Duration.nanoseconds(min(max(next, 50_000_000), 2_000_000_000))
                switch pending.move {
                case .seek: seekTime = time
                case .open: openTime = time
                case .resume: resumeTime = time
                }
            } else if now - pending.issued > .seconds(2) {
                pendingSeek = nil
            } else {
                // A frame decoded before the seek.
                return (mapped, false)
            }
        }
        Self.append(phase, to: &phases)
        if GroupVideoClock.window.contains(phase) {
            framesOnGroup += 1
            outOfWindow = 0
            return (mapped, false)
        }
        // A decoder that was on the group and falls out for a frame or two (a busy board, a late decode) is left
        // to catch up: a seek costs more frames than it saves. One that stays out, or was never in, is moved.
        outOfWindow += 1
        if framesOnGroup > 0, !firstAfterSeek, outOfWindow < Self.framesBeforeSeek { return (mapped, false) }
        outOfWindow = 0
        return (mapped, true)
    }

    /// The position (of the cycle, ns) the group will be at when a move made now is done; nil when the group's time
    /// is not known or the clip is past its end.
    func target(_ move: Move, clock: GroupVideoClock, duration: Int64, timeline: GroupTimeline,
                now: MonotonicInstant) -> Int64? {
        clock.seekTarget(at: now, seekTime: time(of: move), duration: duration, timeline: timeline)
    }

    /// How long `move` is expected to take until its first frame is due.
    func time(of move: Move) -> Duration {
        switch move {
        case .seek: seekTime
        case .open: openTime
        case .resume: resumeTime
        }
    }

    /// A move to `target` the widget makes now: its first frame is waited for.
    func requestSeek(_ target: Int64, move: Move = .seek, now: MonotonicInstant) {
        pendingSeek = (target, move, now)
        seeks += 1
    }

    /// A frame went to the compositor for the vblank at `vblank`.
    func shown(_ frame: VideoFrame, forVblankAt vblank: MonotonicInstant) {
        guard let due = frame.due else { return }
        Self.append(Int64(clamping: (vblank - due).nanosecondsClamped), to: &vblankErrors)
    }

    /// A new item, or the player let go: a seek still waited for never comes (a move to a new item is asked for
    /// after it is opened).
    func reset() {
        pendingSeek = nil
        outOfWindow = 0
    }

    private static func append(_ value: Int64, to values: inout [Int64]) {
        values.append(value)
        if values.count > kept { values.removeFirst(values.count - kept) }
    }

    /// p50 and p99 of `values` (ns) in milliseconds, for `video.state`.
    static func percentiles(_ values: [Int64]) -> [String: PropertyValue] {
        guard !values.isEmpty else { return ["p50": .null, "p99": .null, "count": .number(0)] }
        let sorted = values.sorted()
        func at(_ q: Double) -> PropertyValue {
            .number((Double(sorted[min(Int(Double(sorted.count - 1) * q + 0.5), sorted.count - 1)]) / 1e4).rounded() / 100)
        }
        return ["p50": at(0.5), "p99": at(0.99), "count": .number(Double(sorted.count))]
    }
}
