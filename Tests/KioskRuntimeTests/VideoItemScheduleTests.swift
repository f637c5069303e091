import Foundation
import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// Playlist items' `when:` rules on a headless stage with a fake player and the manual clock (the wall clock runs
/// with the loop's): an item whose window closes while it plays finishes its clip, then the next item that may
/// play; with no item scheduled the widget shows its placeholder, says why in `video.state`, and plays at the next
/// rule boundary, read from the rules rather than frame by frame; a priority item plays alone; an unsynchronized
/// clock plays only items without rules, and its synchronization plays the scheduled ones at once.
/// `StageHarness.fixedTime` is Tuesday 14 November 2023, 23:13:20 in Europe/Paris (+1).
final class VideoItemScheduleTests: XCTestCase {
    typealias FakeMaker = VideoSlotTests.FakeMaker

    private var events: [VideoEventReport] = []

    /// A harness whose wall clock runs, then the fake player (the slots open with the clock already running).
    private func harness(_ playlist: [String], synchronized: Bool = true) throws -> (StageHarness, FakeMaker) {
        let yaml = """
        timezone: Europe/Paris
        widgets:
          - id: v
            type: video
            x: 0
            y: 0
            width: 100%
            height: 100%
            background: "#0000ff"
            playlist:
        \(playlist.map { "      - " + $0 }.joined(separator: "\n"))
        """
        let files = ["a.mp4": Data("a".utf8), "b.mp4": Data("b".utf8), "c.mp4": Data("c".utf8)]
        let h = try StageHarness(yaml: yaml, size: Size(width: 64, height: 48), files: files)
        h.settle()
        h.wallClock.run()
        h.stage.clockSynchronized = synchronized
        let maker = FakeMaker()
        h.listeners.append(h.stage.addEventListener { [unowned self] event in
            if case .video(let report) = event { events.append(report) }
        })
        h.stage.videoPlayers = maker
        h.settle()
        return (h, maker)
    }

    private func names(_ maker: FakeMaker) -> [String] { maker.players.map { URL(fileURLWithPath: $0.request.source).lastPathComponent } }

    /// Runs the loop until the wall clock in Paris reads `hhmmss` on 14 November 2023.
    private func run(_ h: StageHarness, until hhmmss: String) {
        let target = ScheduleTimeText.parse("2023-11-14T\(hhmmss)", in: TimeZone(identifier: "Europe/Paris")!)!
        let now = Date(timeIntervalSince1970: Double(h.wallClock.now().nanoseconds) / 1e9)
        h.run(for: .nanoseconds(Int64(target.timeIntervalSince(now) * 1e9)))
    }

    func testAnItemWhoseWindowClosesFinishesItsClipThenTheNextEligiblePlays() throws {
        let (h, maker) = try harness([
            "{source: a.mp4, when: {to: \"23:14\"}}",
            "{source: b.mp4, when: {from: \"23:14\"}}",
            "c.mp4",
        ])
        XCTAssertEqual(names(maker), ["a.mp4"], "23:13:20: a and c may play; a first")
        maker.last.frame(0xFF0000)
        run(h, until: "23:14:30")
        XCTAssertEqual(names(maker), ["a.mp4"], "a's window closed while it plays: it is not cut")
        XCTAssertFalse(maker.last.closed)
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0xFF0000)
        maker.last.end()
        h.settle()
        XCTAssertEqual(names(maker), ["a.mp4", "b.mp4"], "at its end the rules are read again: b's window is open")
        maker.last.frame(0x00FF00)
        maker.last.end()
        h.settle()
        maker.last.frame(0x00FF00)
        maker.last.end()
        h.settle()
        XCTAssertEqual(names(maker), ["a.mp4", "b.mp4", "c.mp4", "b.mp4"], "the loop starts again from the first item that may play")
        XCTAssertEqual(events.map(\.kind), [.started, .started, .started, .looped])
        XCTAssertEqual(events.filter { $0.kind == .started }.map { URL(fileURLWithPath: $0.source).lastPathComponent }, ["a.mp4", "b.mp4", "c.mp4"])
    }

    func testNoItemScheduledShowsThePlaceholderAndPlaysAtTheBoundaryWithoutPolling() throws {
        let (h, maker) = try harness([
            "{source: a.mp4, when: {from: \"23:14\", to: \"23:15\"}}",
            "{source: b.mp4, when: {from: \"23:20\"}}",
        ])
        XCTAssertEqual(maker.players.count, 0, "nothing may play at 23:13:20")
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x0000FF, "the placeholder")
        var state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["state"], .string("waiting"))
        XCTAssertEqual(state["waiting"], .string("no playlist item is scheduled now; next at 2023-11-14T23:14:00+01:00"))
        XCTAssertEqual(state["schedule_wakeups"], .number(0))

        run(h, until: "23:13:59")
        XCTAssertEqual(maker.players.count, 0)
        run(h, until: "23:14:01")
        XCTAssertEqual(names(maker), ["a.mp4"], "a plays once its window opens")
        state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["schedule_wakeups"], .number(1), "one wake-up, at the boundary")
        XCTAssertEqual(state["waiting"], .null)

        // a plays past its window; at its end nothing may play until 23:20.
        maker.last.frame(0xFF0000)
        run(h, until: "23:15:10")
        maker.last.end()
        h.settle()
        XCTAssertEqual(events.map(\.kind), [.started, .looped], "the playlist's end closes a's record, run to its end")
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x0000FF, "the placeholder again")
        state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["waiting"], .string("no playlist item is scheduled now; next at 2023-11-14T23:20:00+01:00"))
        run(h, until: "23:20:01")
        XCTAssertEqual(names(maker), ["a.mp4", "b.mp4"])
        // 23:15:10 to 23:20:00 is 290 s: the wall clock is read again once a minute (it may step), so five more.
        XCTAssertEqual(try h.stage.videoState(id: "v")["schedule_wakeups"], .number(6))
    }

    func testAPriorityItemPlaysAloneWhileItsWindowIsOpen() throws {
        let (h, maker) = try harness([
            "a.mp4",
            "b.mp4",
            "{source: c.mp4, when: {from: \"23:14\", to: \"23:15\"}, priority: 5}",
        ])
        maker.last.frame(0xFF0000)
        run(h, until: "23:14:10")
        maker.last.end()
        h.settle()
        XCTAssertEqual(names(maker), ["a.mp4", "c.mp4"], "the announcement takes over at the next item boundary")
        maker.last.frame(0xFF0000)
        run(h, until: "23:14:30")
        maker.last.end()
        h.settle()
        XCTAssertEqual(names(maker), ["a.mp4", "c.mp4", "c.mp4"], "alone: it plays again")
        maker.last.frame(0xFF0000)
        run(h, until: "23:15:05")
        maker.last.end()
        h.settle()
        XCTAssertEqual(names(maker), ["a.mp4", "c.mp4", "c.mp4", "a.mp4"], "its window closed: the playlist from the top")
    }

    func testAnUnsynchronizedClockPlaysOnlyItemsWithoutRulesThenSyncPlaysAtOnce() throws {
        let (h, maker) = try harness(["{source: a.mp4, when: {from: \"23:00\"}}"], synchronized: false)
        XCTAssertEqual(maker.players.count, 0, "a wrong clock must not pick items by their rules")
        let state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["state"], .string("waiting"))
        XCTAssertEqual(h.string(state["waiting"])?.hasPrefix("the clock is not synchronized"), true, "\(state)")
        h.stage.clockSynchronized = true
        h.settle()
        XCTAssertEqual(names(maker), ["a.mp4"], "synchronized: the schedule applies at once")
    }

    /// kioskd reads the clock's state once the stage and its videos are up: an item not yet on the glass (no first
    /// frame) is let go when the clock turns out to be unsynchronized; one already playing finishes its clip.
    func testAClockFoundUnsynchronizedLetsGoOnlyOfAnItemNotYetShown() throws {
        let (h, maker) = try harness(["{source: a.mp4, when: {from: \"23:00\"}}", "b.mp4"])
        XCTAssertEqual(names(maker), ["a.mp4"])
        h.stage.clockSynchronized = false
        h.settle()
        XCTAssertTrue(maker.players[0].closed, "nothing shown yet: the rules are read again")
        XCTAssertEqual(names(maker), ["a.mp4", "b.mp4"], "only the item without rules plays")

        let (h2, maker2) = try harness(["{source: a.mp4, when: {from: \"23:00\"}}", "b.mp4"])
        maker2.last.frame(0xFF0000)
        h2.settle()
        h2.stage.clockSynchronized = false
        h2.settle()
        XCTAssertFalse(maker2.last.closed, "an item on the glass is not cut")
        XCTAssertEqual(names(maker2), ["a.mp4"])
        maker2.last.end()
        h2.settle()
        XCTAssertEqual(names(maker2), ["a.mp4", "b.mp4"], "at its end, the rules of an unsynchronized clock")
    }

    /// A one-clip playlist with rules loops by seeking while its window is open, as one without rules does, and
    /// waits once the window has closed.
    func testAOneClipPlaylistLoopsInItsWindowThenWaits() throws {
        let (h, maker) = try harness(["{source: a.mp4, when: {to: \"23:14\"}}"])
        maker.last.frame(0xFF0000)
        maker.last.end()
        h.settle()
        XCTAssertEqual(maker.players.count, 1)
        XCTAssertEqual(maker.last.seeks, [.zero], "looped in place")
        maker.last.frame(0xFF0000)
        run(h, until: "23:14:05")
        maker.last.end()
        h.settle()
        XCTAssertTrue(maker.last.closed, "the window closed: no more loops")
        XCTAssertEqual(try h.stage.videoState(id: "v")["waiting"], .string("no playlist item is scheduled now; next at 2023-11-15T00:00:00+01:00"))
        XCTAssertEqual(events.map(\.kind), [.started, .looped, .looped])
    }
}
