import KioskCore
import KioskTestSupport
import XCTest

/// A video's frames on a sync group's clock: a looping clip is at (group time − anchor) mod its duration, and each
/// frame the decoder paces on this kiosk's clock is given the local instant of its group due time, through a group
/// clock seconds away from the local one and 100 ppm fast, so that members show the same frame at the same group
/// time whatever their decoders do.
final class GroupVideoClockTests: XCTestCase {
    static let frame: Int64 = 33_333_333
    static let clip: Int64 = 4_000_000_000

    private func frame(at position: Int64, due: MonotonicInstant?) -> VideoFrame {
        VideoFrame(surface: LayerSurface(size: Size(width: 2, height: 2)), timestamp: .nanoseconds(position),
                   duration: .nanoseconds(Self.frame), due: due)
    }

    func testALoopingClipIsAtTheGroupTimeSinceItsAnchorModuloItsDuration() {
        let clock = GroupVideoClock(anchor: 1_000_000_000, loops: true)
        XCTAssertEqual(clock.position(atGroupTime: 1_000_000_000, duration: Self.clip), 0)
        XCTAssertEqual(clock.position(atGroupTime: 6_500_000_000, duration: Self.clip), 1_500_000_000)
        XCTAssertEqual(clock.position(atGroupTime: 500_000_000, duration: Self.clip), 3_500_000_000, "before the anchor: the loop before")
        let once = GroupVideoClock(anchor: 1_000_000_000, loops: false)
        XCTAssertEqual(once.position(atGroupTime: 2_000_000_000, duration: Self.clip), 1_000_000_000)
        XCTAssertNil(once.position(atGroupTime: 500_000_000, duration: Self.clip), "not started")
        XCTAssertNil(once.position(atGroupTime: 5_000_000_000, duration: Self.clip), "ended")
        // A frame's group due is in the loop nearest the time the decoder meant it for.
        XCTAssertEqual(clock.groupDue(ofPosition: 100_000_000, near: 4_990_000_000, duration: Self.clip), 5_100_000_000)
        XCTAssertEqual(clock.groupDue(ofPosition: 3_900_000_000, near: 5_010_000_000, duration: Self.clip), 4_900_000_000)
    }

    /// Two members whose clocks are seconds apart and one of which runs 100 ppm fast, with decoders started at
    /// different moments and positions: every frame's local due time maps back to the same group time on both,
    /// within a microsecond, over a minute of play, and the phase says how far each decoder is from the group.
    func testEachFrameIsDueAtItsGroupTimeOnMembersWithAnOffsetAndADrift() throws {
        let clock = GroupVideoClock(anchor: 0, loops: true)
        let members = [OffsetGroupTimeline(offset: 1_765_000_000_123_456_789, ppm: 0),
                       OffsetGroupTimeline(offset: 1_765_000_003_700_000_000, ppm: 100)]
        // Each decoder runs on its member's local clock from its own start and position, 25 ms and 70 ms off the
        // group's position.
        let skews: [Int64] = [25_000_000, -70_000_000]
        for (m, timeline) in members.enumerated() {
            let start = MonotonicInstant(nanoseconds: UInt64(5_000_000_000 + m * 1_300_000_000))
            let groupAtStart = try XCTUnwrap(timeline.groupTime(at: start))
            let startPosition = try XCTUnwrap(clock.position(atGroupTime: groupAtStart + skews[m], duration: Self.clip))
            for n in 0..<1800 {
                // The decoder's position and due time (a clip that loops: positions wrap at its duration).
                let elapsed = Int64(n) * Self.frame
                let position = (startPosition + elapsed) % Self.clip
                let decoderDue = start + .nanoseconds(elapsed)
                let (mapped, phase) = try XCTUnwrap(clock.map(frame(at: position, due: decoderDue), duration: Self.clip, timeline: timeline))
                let due = try XCTUnwrap(mapped.due)
                let groupDue = try XCTUnwrap(timeline.groupTime(at: due))
                // The mapped instant is on the group's time for this position, through the member's drift.
                let wanted = clock.groupDue(ofPosition: position, near: groupDue, duration: Self.clip)
                XCTAssertLessThanOrEqual(abs(groupDue - wanted), 1_000, "member \(m) frame \(n): \(groupDue - wanted) ns off its group time")
                // So a frame is due when the group is at its position: on both members alike.
                XCTAssertEqual(clock.position(atGroupTime: wanted, duration: Self.clip), position)
                if n == 0 {
                    // The decoder is `skew` ahead of the group (plus the drift since the start): the phase says so.
                    XCTAssertEqual(Double(phase), Double(skews[m]), accuracy: 1_000, "member \(m)")
                }
            }
        }
    }

    func testAFrameWithNoDueTimeOrNoGroupTimePlaysFreeAndTheSeekTargetIsAheadBySeekTime() throws {
        let timeline = OffsetGroupTimeline(offset: 10_000_000_000, ppm: 100)
        let clock = GroupVideoClock(anchor: 0, loops: true)
        XCTAssertNil(clock.map(frame(at: 0, due: nil), duration: Self.clip, timeline: timeline), "a paused seek's preroll shows at once")
        timeline.known = false
        XCTAssertNil(clock.map(frame(at: 0, due: MonotonicInstant(nanoseconds: 1_000)), duration: Self.clip, timeline: timeline),
                     "a member joining plays free")
        XCTAssertNil(clock.seekTarget(at: MonotonicInstant(nanoseconds: 1_000), seekTime: .milliseconds(150), duration: Self.clip, timeline: timeline))
        timeline.known = true
        let now = MonotonicInstant(nanoseconds: 2_000_000_000)
        let target = try XCTUnwrap(clock.seekTarget(at: now, seekTime: .milliseconds(150), duration: Self.clip, timeline: timeline))
        let groupThen = try XCTUnwrap(timeline.groupTime(at: now + .milliseconds(150)))
        XCTAssertEqual(target, groupThen % Self.clip)
    }

    func testAPlaylistIsOneCycleOfItsItemsAndAnItemsFramesAreAtItsStartInIt() throws {
        XCTAssertNil(GroupPlaylist(durations: []))
        XCTAssertNil(GroupPlaylist(durations: [600, 0]), "an item with no duration cannot be timed")
        let playlist = try XCTUnwrap(GroupPlaylist(durations: [600, 1_000, 400]))
        XCTAssertEqual(playlist.starts, [0, 600, 1_600])
        XCTAssertEqual(playlist.cycle, 2_000)
        XCTAssertEqual(playlist.item(at: 0).index, 0)
        XCTAssertEqual(playlist.item(at: 599).index, 0)
        XCTAssertEqual(playlist.item(at: 600).index, 1)
        XCTAssertEqual(playlist.item(at: 600).offset, 0)
        XCTAssertEqual(playlist.item(at: 1_999).index, 2)
        XCTAssertEqual(playlist.item(at: 1_999).offset, 399)
        XCTAssertEqual(playlist.item(at: 2_100).index, 0, "taken modulo the cycle")
        XCTAssertEqual(playlist.item(at: 2_100).offset, 100)
        XCTAssertEqual(playlist.item(at: -100).index, 2)
        XCTAssertEqual(playlist.item(at: -100).offset, 300)

        // The second item's frame at 0.25 s is the cycle's 0.85 s: due when the group is there, in the nearest cycle.
        let timeline = OffsetGroupTimeline(offset: 0)
        let cycle: Int64 = 1_600_000_000
        let clock = GroupVideoClock(anchor: 0, loops: true, itemStart: 600_000_000)
        let groupDue = 10 * cycle + 850_000_000
        let decoderDue = MonotonicInstant(nanoseconds: UInt64(groupDue + 30_000_000))
        let frame = VideoFrame(surface: LayerSurface(size: Size(width: 1, height: 1), isOpaque: true),
                               timestamp: .milliseconds(250), duration: .milliseconds(33), due: decoderDue)
        let (mapped, phase) = try XCTUnwrap(clock.map(frame, duration: cycle, timeline: timeline))
        XCTAssertEqual(phase, -30_000_000, "the decoder is 30 ms behind")
        XCTAssertEqual(mapped.due, MonotonicInstant(nanoseconds: UInt64(groupDue)))
    }
}
