/// A video's frames on a sync group's clock: which group time each frame is due at, so that every member of the
/// group shows frame N at the same vblank, and how far the decoder is from that.
///
/// The clip's position zero is at the group time `anchor` (the group clock's zero for a scene's only page, as the
/// group page loop is; a page's group turn time for a video on a page of that loop). A looping clip of duration D is
/// at position `(g − anchor) mod D` at group time g; one that does not loop at `g − anchor` until it ends.
///
/// The decoder paces its frames on this kiosk's clock (`VideoFrame.due`). Each frame is given the group time its
/// position is due at in the loop nearest the decoder's own time for it, mapped back onto this kiosk's clock
/// through the timeline (`map`); the frame is shown at the vblank nearest that, whatever the decoder's pace. The
/// difference (`phase`: group due minus decoder due) is how far the decoder is behind (negative) or ahead of the
/// group. Ahead, frames wait in the pacer's schedule; behind, they would come after their vblank: outside
/// `window` the decoder is moved to the group's position by a seek (`seekTarget`). The group clock drifts against
/// this kiosk's by up to ~100 ppm: 0.1 ms a second, which the mapping follows frame by frame and the window absorbs
/// for minutes; a loop's seek to its start resets it anyway.
///
/// A playlist of several clips is timed as one clip, its items one after the other (`GroupPlaylist`): `duration` is
/// then the whole cycle's, positions are the cycle's, and a frame of an item is at the item's start in the cycle
/// (`itemStart`) plus its timestamp.
///
/// A plain value; main thread, with the video widget that owns it.
public struct GroupVideoClock: Sendable, Equatable {
    /// The group time of the clip's position zero, in nanoseconds.
    public var anchor: Int64
    /// Whether the clip starts again at its end (a looping single clip, or a looping playlist's cycle).
    public var loops: Bool
    /// Where the decoder's clip starts in the cycle, ns: zero for a single clip, the item's start in a playlist.
    public var itemStart: Int64

    public init(anchor: Int64, loops: Bool, itemStart: Int64 = 0) {
        self.anchor = anchor
        self.loops = loops
        self.itemStart = itemStart
    }

    /// How far the decoder may be from the group before it is moved by a seek: a frame whose group due is more than
    /// 20 ms before the decoder's (it arrives `GStreamerPlayer.lead`, 40 ms, ahead of the decoder's time; 20 ms
    /// leaves a vblank of 60 Hz for the main thread) would miss its vblank; one more than 100 ms after would hold
    /// more frames than the pacer keeps at 60 fps.
    public static let window: ClosedRange<Int64> = -20_000_000...100_000_000

    /// The position, in nanoseconds, the group is at at group time `time`, for a clip of `duration` nanoseconds; nil
    /// before the anchor, or past the end of a clip that does not loop.
    public func position(atGroupTime time: Int64, duration: Int64) -> Int64? {
        let since = time - anchor
        if loops {
            guard duration > 0 else { return nil }
            return ((since % duration) + duration) % duration
        }
        guard since >= 0, duration <= 0 || since < duration else { return nil }
        return since
    }

    /// The group time a frame at `position` (its timestamp, ns) is due at: in the loop nearest `near` (the group
    /// time the decoder meant it for).
    public func groupDue(ofPosition position: Int64, near: Int64, duration: Int64) -> Int64 {
        guard loops, duration > 0 else { return anchor + position }
        let loop = Double(near - anchor - position) / Double(duration)
        return anchor + Int64(loop.rounded()) * duration + position
    }

    /// A frame as the group times it: its due time moved onto the group's due for its position, and the phase
    /// (group due minus the decoder's, ns). Nil when the frame has no due time (shown at once) or the group's time
    /// is not known yet (a member joining plays free).
    public func map(_ frame: VideoFrame, duration: Int64, timeline: GroupTimeline) -> (frame: VideoFrame, phase: Int64)? {
        guard let due = frame.due, let decoderGroupTime = timeline.groupTime(at: due) else { return nil }
        let position = itemStart + Int64(clamping: frame.timestamp.nanosecondsClamped)
        let groupDue = groupDue(ofPosition: position, near: decoderGroupTime, duration: duration)
        let phase = groupDue - decoderGroupTime
        // The phase is on the group's clock; one step more takes out the rate between the clocks (100 ppm of a
        // 70 ms phase is 7 µs).
        var local = due + .nanoseconds(phase)
        if let reached = timeline.groupTime(at: local) { local = local + .nanoseconds(groupDue - reached) }
        let mapped = VideoFrame(surface: frame.surface, timestamp: frame.timestamp, duration: frame.duration, due: local)
        return (mapped, phase)
    }

    /// Where to seek a decoder that is outside the window, now (`local`), expecting the seek to take `seekTime`:
    /// the position the group will be at when the first frame after the seek is due. Nil when the group's time is
    /// not known or the clip is past its end.
    public func seekTarget(at local: MonotonicInstant, seekTime: Duration, duration: Int64, timeline: GroupTimeline) -> Int64? {
        guard let time = timeline.groupTime(at: local + seekTime) else { return nil }
        return position(atGroupTime: time, duration: duration)
    }
}

/// A playlist of clips played one after the other on a sync group's clock, as one clip of their summed durations
/// (the cycle): where each item starts in it, and which item and offset a position of the cycle falls on. A plain
/// value; any thread.
public struct GroupPlaylist: Sendable, Equatable {
    /// Each item's duration, ns, all positive.
    public let durations: [Int64]
    /// Each item's start in the cycle, ns.
    public let starts: [Int64]
    /// The cycle's length, ns.
    public let cycle: Int64

    /// Nil unless there is an item and every duration is positive.
    public init?(durations: [Int64]) {
        guard !durations.isEmpty, durations.allSatisfy({ $0 > 0 }) else { return nil }
        self.durations = durations
        var starts: [Int64] = []
        var total: Int64 = 0
        for duration in durations {
            starts.append(total)
            total += duration
        }
        self.starts = starts
        cycle = total
    }

    /// The item a position of the cycle falls in, and the offset into it; positions outside the cycle are taken
    /// modulo it.
    public func item(at position: Int64) -> (index: Int, offset: Int64) {
        let wrapped = ((position % cycle) + cycle) % cycle
        // The last item whose start is at or before the position.
        var index = 0
        while index + 1 < starts.count, starts[index + 1] <= wrapped { index += 1 }
        return (index, wrapped - starts[index])
    }
}
