import Foundation
import KioskCore
@testable import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// A video widget in a sync group, with a fake decoder on the manual clock: a member whose decoder is far from the
/// group's position seeks to where the group will be once the seek is done, and each frame then reaches the screen at
/// the vblank nearest its group due time; a clip that ends is sought to the group's position, not to its start.
final class GroupVideoTests: XCTestCase {
    typealias FakePlayer = VideoSlotTests.FakePlayer
    typealias FakeMaker = VideoSlotTests.FakeMaker

    /// One looping video filling the screen.
    static let scene = """
        widgets:
          - {id: v, type: video, source: a.mp4, loop: true, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """
    static let frame: Int64 = 33_333_333
    static let clip: Int64 = 1_000_000_000

    /// A colour per frame position, so the screen says which frame it shows.
    static func colour(_ position: Int64) -> UInt32 { 0x000100 * UInt32(position / frame % 200 + 20) }

    func testAMemberFarFromTheGroupSeeksToItAndShowsEachFrameAtItsGroupTime() throws {
        let h = try StageHarness(yaml: Self.scene, size: Size(width: 64, height: 48), files: ["a.mp4": Data("a".utf8)])
        let maker = FakeMaker()
        h.stage.videoPlayers = maker
        let timeline = OffsetGroupTimeline(offset: 1_796_000_000_987_654_321)
        h.stage.timeline = timeline
        h.settle()
        let player = maker.last
        XCTAssertEqual(player.duration, .nanoseconds(Self.clip))
        let clock = GroupVideoClock(anchor: 0, loops: true)
        func groupPosition(_ local: MonotonicInstant) throws -> Int64 {
            try XCTUnwrap(clock.position(atGroupTime: try XCTUnwrap(timeline.groupTime(at: local)), duration: Self.clip))
        }

        // The decoder starts the clip from its start, wherever the group is: a frame far outside the window.
        let now = h.loop.now
        let behind = (try groupPosition(now) + Self.clip / 2) % Self.clip
        player.frame(Self.colour(behind), timestamp: .nanoseconds(behind), due: now + .milliseconds(40))
        let target = try XCTUnwrap(player.seeks.last, "a seek to the group's position")
        let expected = try groupPosition(now + .milliseconds(150))
        XCTAssertEqual(Double(target.nanosecondsClamped), Double(expected), accuracy: 1_000_000, "where the group is once the seek is done")

        // After the seek (here 120 ms), frames from the target on, paced by the decoder on its own clock and 30 ms
        // late against the group: each is shown at the vblank nearest its group time all the same.
        let first = target.nanosecondsClamped - target.nanosecondsClamped % Self.frame
        let decoderStart = now + .milliseconds(120)
        var frames: [(position: Int64, groupDue: Int64)] = []
        for n in 0..<12 {
            let position = (first + Int64(n) * Self.frame) % Self.clip
            let due = decoderStart + .nanoseconds(Int64(n) * Self.frame)
            let group = clock.groupDue(ofPosition: position, near: try XCTUnwrap(timeline.groupTime(at: due)), duration: Self.clip)
            frames.append((position, group))
        }
        // The fake decoder hands each frame over 40 ms before its own due time, as GStreamer's sink does.
        try deliver(frames, to: player, in: h, timeline: timeline, settle: .milliseconds(200)) {
            decoderStart + .nanoseconds(Int64($0) * Self.frame)
        }
        XCTAssertEqual(player.seeks.count, 1, "one seek: the frames after it are within the window")
        let refresh = h.backend.info.mode.frameDuration.nanosecondsClamped
        let state = try h.stage.videoState(id: "v")
        guard case .object(let group)? = state["group"] else { return XCTFail("video.state has group: \(state)") }
        XCTAssertEqual(group["seeks"], .number(1))
        guard case .object(let phase)? = group["phase_error_ms"], case .number(let p99)? = phase["p99"] else { return XCTFail("\(group)") }
        XCTAssertLessThanOrEqual(p99, Double(refresh) / 2e6 + 0.01)

        // The clip ends: the widget seeks to the group's position when the seek will be done, not to the start.
        let endedAt = h.loop.now
        player.end()
        h.run(for: .milliseconds(300))
        let loopSeek = try XCTUnwrap(player.seeks.last)
        XCTAssertEqual(player.seeks.count, 2)
        let wanted = try groupPosition(endedAt + .milliseconds(150))
        XCTAssertLessThan(abs(loopSeek.nanosecondsClamped - wanted), 400_000_000, "on at the group's position (\(loopSeek) for \(wanted) ns)")
        XCTAssertNotEqual(loopSeek, .zero)
    }

    /// A playlist of a 0.6 s and a 1 s clip on the group's clock, as one clip of 1.6 s: the member learns the second
    /// item's duration from a paused probe, opens the item the group is in at the position it will be at once
    /// opened, shows its frames at their group times, and at its end goes on with the item the group is then in.
    func testAPlaylistIsTimedAsOneClipAndOpensTheItemTheGroupIsIn() throws {
        let scene = """
            widgets:
              - {id: v, type: video, playlist: [a.mp4, b.mp4], loop: true, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
            """
        let h = try StageHarness(yaml: scene, size: Size(width: 64, height: 48),
                                 files: ["a.mp4": Data("a".utf8), "b.mp4": Data("b".utf8)])
        var reports: [VideoEventReport] = []
        h.listeners.append(h.stage.addEventListener { event in
            if case .video(let report) = event { reports.append(report) }
        })
        let maker = FakeMaker()
        maker.duration = { $0.hasSuffix("a.mp4") ? .milliseconds(600) : .seconds(1) }
        h.stage.videoPlayers = maker
        let timeline = OffsetGroupTimeline(offset: 0)
        h.stage.timeline = timeline
        h.settle()
        let cycle: Int64 = 1_600_000_000
        // The group is 0.9 s into its cycle: 0.3 s into b.
        timeline.offset = 1_000 * cycle + 900_000_000 - Int64(h.loop.now.nanoseconds)
        let clock = GroupVideoClock(anchor: 0, loops: true)
        func groupPosition(_ local: MonotonicInstant) throws -> Int64 {
            try XCTUnwrap(clock.position(atGroupTime: try XCTUnwrap(timeline.groupTime(at: local)), duration: cycle))
        }
        func local(ofGroupTime time: Int64) -> MonotonicInstant { MonotonicInstant(nanoseconds: UInt64(time - timeline.offset)) }

        // The first item plays from its start; its first frame starts the probe of the second item's duration.
        let a = maker.last
        XCTAssertTrue(a.request.source.hasSuffix("a.mp4"))
        a.frame(0x200000, timestamp: .zero, due: h.loop.now + .milliseconds(40))
        XCTAssertEqual(maker.players.count, 2, "a probe of b.mp4")
        let probe = maker.players[1]
        XCTAssertTrue(probe.request.source.hasSuffix("b.mp4"))
        XCTAssertTrue(probe.request.muted)
        XCTAssertEqual(probe.state, .paused)
        XCTAssertTrue(probe.closed, "closed once it said its duration")

        // The next frame is timed by the group: far from it, and in the other item, so b.mp4 is opened and sought to
        // where the group will be once it is open (300 ms ahead before the time is learnt).
        let movedAt = h.loop.now
        a.frame(0x210000, timestamp: .milliseconds(33), due: h.loop.now + .milliseconds(73))
        XCTAssertTrue(a.closed)
        let b = maker.last
        XCTAssertTrue(b.request.source.hasSuffix("b.mp4"))
        XCTAssertFalse(b === probe)
        let target = try groupPosition(movedAt + .milliseconds(300))
        XCTAssertEqual(b.seeks.count, 1)
        XCTAssertEqual(Double(try XCTUnwrap(b.seeks.first).nanosecondsClamped), Double(target - 600_000_000), accuracy: 1_000_000,
                       "b.mp4 at the group's position less a's 0.6 s")

        // b's frames from there, paced by its decoder 10 ms late against the group: each shows at the vblank nearest
        // its group time, and nothing seeks again.
        let step = Self.frame
        let firstOffset = (target - 600_000_000) / step * step + step
        let groupNow = try XCTUnwrap(timeline.groupTime(at: h.loop.now))
        var frames: [(offset: Int64, groupDue: Int64)] = []
        for n in 0..<10 {
            let offset = firstOffset + Int64(n) * step
            frames.append((offset, clock.groupDue(ofPosition: 600_000_000 + offset, near: groupNow, duration: cycle)))
        }
        try deliver(frames.map { ($0.offset, $0.groupDue) }, to: b, in: h, timeline: timeline, settle: .milliseconds(100)) {
            local(ofGroupTime: frames[$0].groupDue) + .milliseconds(10)
        }
        XCTAssertEqual(b.seeks.count, 1, "the frames after the move are within the window")
        let state = try h.stage.videoState(id: "v")
        guard case .object(let group)? = state["group"] else { return XCTFail("video.state has group: \(state)") }
        XCTAssertEqual(group["seeks"], .number(1))

        // Within 1.5 s of b's end, a is opened ahead, paused.
        let ahead = maker.last
        XCTAssertTrue(ahead.request.source.hasSuffix("a.mp4"), "the next item opened ahead")
        XCTAssertEqual(ahead.state, .paused)
        XCTAssertTrue(ahead.seeks.isEmpty)

        // b ends as the group reaches the end of the cycle: the playlist goes on with a (the player opened ahead,
        // sought to the position the group will be at once it plays, and played), and says it looped.
        let playersBefore = maker.players.count
        let cycleEnd = (try XCTUnwrap(timeline.groupTime(at: h.loop.now)) / cycle + 1) * cycle
        while try XCTUnwrap(timeline.groupTime(at: h.loop.now)) < cycleEnd - 20_000_000 { h.run(for: .milliseconds(4)) }
        let endedAt = h.loop.now
        b.end()
        h.run(for: .milliseconds(100))
        let next = maker.last
        XCTAssertTrue(next === ahead, "the player opened ahead is taken over")
        XCTAssertEqual(maker.players.count, playersBefore, "no player opened at the end")
        XCTAssertEqual(next.state, .playing)
        XCTAssertTrue(b.closed)
        let resumed = try XCTUnwrap(next.seeks.first, "a.mp4 sought to the group's position")
        let expected = try groupPosition(endedAt)
        XCTAssertGreaterThan(resumed.nanosecondsClamped, (expected + 50_000_000) % cycle, "ahead of the group by the time an open takes")
        XCTAssertLessThan(resumed.nanosecondsClamped, 600_000_000, "within a.mp4")
        XCTAssertTrue(reports.contains { $0.kind == .looped }, "the cycle's end is reported")
        // The player opened ahead said nothing while paused: its first frame says it started.
        let startsBefore = reports.filter { $0.kind == .started }.count
        next.frame(Self.colour(resumed.nanosecondsClamped), timestamp: resumed, due: h.loop.now + .milliseconds(40))
        XCTAssertEqual(reports.filter { $0.kind == .started }.count, startsBefore + 1)
        XCTAssertTrue(reports.last?.source.hasSuffix("a.mp4") ?? false)
    }

    func testWithoutATimelineFramesKeepTheDecodersTimeAndNothingSeeks() throws {
        let h = try StageHarness(yaml: Self.scene, size: Size(width: 64, height: 48), files: ["a.mp4": Data("a".utf8)])
        let maker = FakeMaker()
        h.stage.videoPlayers = maker
        h.settle()
        maker.last.frame(0xFF0000, timestamp: .milliseconds(500), due: h.loop.now + .milliseconds(20))
        h.run(for: .milliseconds(100))
        XCTAssertEqual(try h.pixel(x: 1, y: 1), 0xFF0000)
        XCTAssertTrue(maker.last.seeks.isEmpty)
        XCTAssertEqual(try h.stage.videoState(id: "v")["group"], .null)
        maker.last.end()
        h.run(for: .milliseconds(300))
        XCTAssertEqual(maker.last.seeks, [.zero], "a loop starts the clip again from its start")
    }

    /// Hands `frames` (each a timestamp, which is also its colour, and its group due) to `player` as a decoder does,
    /// each 40 ms before `decoderDue` of its index, runs `settle` more, and checks that every frame but the first
    /// (which may come as the decoder moves) flipped within half a refresh of its group due.
    private func deliver(_ frames: [(position: Int64, groupDue: Int64)], to player: FakePlayer, in h: StageHarness,
                         timeline: OffsetGroupTimeline, settle: Duration, decoderDue: (Int) -> MonotonicInstant) throws {
        var shownAt: [Int64: Int64] = [:]
        h.listeners.append(h.engine.addFlipListener { flip in
            guard let image = h.backend.frontBufferSnapshot(), let group = timeline.groupTime(at: flip.timestamp) else { return }
            let pixel = UInt32(image[2]) << 16 | UInt32(image[1]) << 8 | UInt32(image[0])
            if let frame = frames.first(where: { Self.colour($0.position) == pixel }), shownAt[frame.position] == nil {
                shownAt[frame.position] = group
            }
        })
        var delivered = 0
        while delivered < frames.count {
            if h.loop.now + .milliseconds(40) >= decoderDue(delivered) {
                player.frame(Self.colour(frames[delivered].position), timestamp: .nanoseconds(frames[delivered].position), due: decoderDue(delivered))
                delivered += 1
            }
            h.run(for: .milliseconds(4))
        }
        h.run(for: settle)
        let refresh = h.backend.info.mode.frameDuration.nanosecondsClamped
        for frame in frames.dropFirst() {
            let shown = try XCTUnwrap(shownAt[frame.position], "frame at \(frame.position) shown")
            XCTAssertLessThanOrEqual(abs(shown - frame.groupDue), refresh / 2 + 1,
                                     "frame at \(frame.position): flipped \(Double(shown - frame.groupDue) / 1e6) ms from its group time")
        }
    }
}
