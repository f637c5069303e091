import Foundation
import KioskCore
@testable import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// Stages in a sync group run their page loop and tickers on the group's time: two members started 0.71 s apart
/// (so their vblanks are out of phase) flip every page change within a refresh period of each other, mapped to the
/// group clock, and show their tickers at the same place for the same group time, within a frame's travel.
final class GroupTimelineTests: XCTestCase {
    /// The group's time as a member reads it: its own clock moved by `offset`.
    typealias OffsetTimeline = OffsetGroupTimeline

    /// Three pages of one second, each a colour of its own filling the screen; a ticker on every page.
    static let scene = """
        size: display
        pages:
          - name: red
            duration: 1
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#ff0000"}
              - {id: t1, type: ticker, text: "news across the wall", speed: 120, x: 0, y: 80%, width: 100%, height: 20%}
          - name: green
            duration: 1
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#00ff00"}
              - {id: t2, type: ticker, text: "news across the wall", speed: 120, x: 0, y: 80%, width: 100%, height: 20%}
          - name: blue
            duration: 1
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
              - {id: t3, type: ticker, text: "news across the wall", speed: 120, x: 0, y: 80%, width: 100%, height: 20%}
        """
    static let size = Size(width: 160, height: 120)
    static let frame: Int64 = 16_666_667

    /// One member: its harness, its timeline, and what its flips showed: (group time of the flip, page colour).
    final class Member {
        let harness: StageHarness
        let timeline: OffsetTimeline
        var flips: [(group: Int64, colour: UInt32)] = []
        var tickers: [(group: Int64, x: Int)] = []

        init(offset: Int64, scene: String = GroupTimelineTests.scene) throws {
            harness = try StageHarness(yaml: scene, size: GroupTimelineTests.size)
            timeline = OffsetTimeline(offset: offset)
            harness.stage.timeline = timeline
            let timeline = self.timeline, backend = harness.backend, stage = harness.stage
            harness.listeners.append(harness.engine.addFlipListener { [unowned self] flip in
                guard let image = backend.frontBufferSnapshot(), image.count >= 4 else { return }
                let group = Int64(flip.timestamp.nanoseconds) + timeline.offset
                // The top-left pixel, XRGB little-endian: the page's colour.
                let colour = UInt32(image[2]) << 16 | UInt32(image[1]) << 8 | UInt32(image[0])
                self.flips.append((group, colour))
                for id in ["t1", "t2", "t3"] {
                    if let node = stage.node(id: id), let strip = node.body, !(stage.currentPage != node.page) {
                        self.tickers.append((group, strip.frame.x))
                    }
                }
            })
        }

        /// The group times at which the screen changed from one page's colour to another's (not the first page's
        /// arrival on a black screen), and to which.
        var changes: [(group: Int64, colour: UInt32)] {
            zip(flips.dropFirst(), flips).compactMap { now, before in now.colour != before.colour && before.colour != 0 ? now : nil }
        }
    }

    func testMembersStartedApartChangePagesAtTheSameVblankAndShowTheirTickersAlike() throws {
        let base: Int64 = 1_800_000_000_000_000_000
        let a = try Member(offset: base)
        a.harness.run(for: .milliseconds(710))
        // b's clock starts at its own zero, 0.71 s after a's: the group time is its clock plus that, plus the base.
        let b = try Member(offset: base + 710_000_000)
        XCTAssertNotEqual(a.harness.stage.currentPage, "", "a shows a page")
        for _ in 0..<(8 * 60) {
            a.harness.run(for: .nanoseconds(Self.frame))
            b.harness.run(for: .nanoseconds(Self.frame))
        }
        // Every change of b's (past its first page, shown as it joined) is one of a's, within a refresh period.
        let changesA = a.changes, changesB = b.changes
        XCTAssertGreaterThanOrEqual(changesB.count, 6, "b turned its pages")
        var differences: [Int64] = []
        for change in changesB {
            let nearest = try XCTUnwrap(changesA.filter { $0.colour == change.colour }.min { abs($0.group - change.group) < abs($1.group - change.group) })
            differences.append(abs(nearest.group - change.group))
        }
        print("group timeline: a's changes \(changesA.map { Double($0.group % 10_000_000_000) / 1e6 }), b's \(changesB.map { Double($0.group % 10_000_000_000) / 1e6 })")
        differences.sort()
        print("group timeline: page changes of two members, flip times apart on the group clock: max \(Double(differences.last ?? 0) / 1e6) ms over \(differences.count) changes")
        XCTAssertLessThanOrEqual(differences.last ?? .max, Self.frame, "within one refresh period")
        // Each change lands at the vblank nearest its turn (whole seconds on the group clock), tickers animating.
        for change in changesA + changesB {
            let intoSecond = ((change.group % 1_000_000_000) + 1_000_000_000) % 1_000_000_000
            let fromTurn = min(intoSecond, 1_000_000_000 - intoSecond)
            XCTAssertLessThanOrEqual(fromTurn, Self.frame / 2 + 1_000_000, "a change \(Double(fromTurn) / 1e6) ms from its turn: not at the nearest vblank")
        }
        // The stage measures the same: each turn's flip against the turn's group time.
        for member in [a, b] {
            let errors = member.harness.stage.turnPhaseErrors
            XCTAssertGreaterThanOrEqual(errors.count, 6)
            XCTAssertLessThanOrEqual(errors.map { abs($0) }.max() ?? .max, Self.frame / 2 + 1_000_000, "phase errors \(errors)")
        }
        XCTAssertEqual(b.harness.stage.turnPhaseErrors.map { Double($0) / 1e6 }.max() ?? 0, -6.67, accuracy: 0.1, "b's vblanks are 6.7 ms before a's")
        // Tickers at the same group time (a's flip nearest b's) are within one frame's travel (120 px/s: 2 px).
        var tickerWorst = 0.0
        for sample in b.tickers.suffix(200) {
            guard let nearest = a.tickers.min(by: { abs($0.group - sample.group) < abs($1.group - sample.group) }) else { continue }
            let expected = 120.0 * Double(sample.group - nearest.group) / 1e9
            tickerWorst = max(tickerWorst, abs(Double(nearest.x - sample.x) - expected))
        }
        print("group timeline: ticker position apart, beyond the time between the two flips: max \(tickerWorst) px")
        XCTAssertLessThanOrEqual(tickerWorst, 1.0)
    }

    /// Pages with nothing moving: the output is idle between turns, and each turn still flips at the vblank
    /// nearest it.
    func testStillPagesTurnAtTheNearestVblankToo() throws {
        let still = Self.scene.split(separator: "\n").filter { !$0.contains("ticker") }.joined(separator: "\n")
        let base: Int64 = 1_800_000_000_000_000_000
        let a = try Member(offset: base, scene: still)
        a.harness.run(for: .milliseconds(710))
        let b = try Member(offset: base + 710_000_000, scene: still)
        for _ in 0..<(5 * 60) {
            a.harness.run(for: .nanoseconds(Self.frame))
            b.harness.run(for: .nanoseconds(Self.frame))
        }
        XCTAssertFalse(a.harness.engine.isAnimating, "nothing animates between turns")
        for member in [a, b] {
            XCTAssertGreaterThanOrEqual(member.changes.count, 3)
            for change in member.changes {
                let intoSecond = ((change.group % 1_000_000_000) + 1_000_000_000) % 1_000_000_000
                XCTAssertLessThanOrEqual(min(intoSecond, 1_000_000_000 - intoSecond), Self.frame / 2 + 1_000_000,
                                         "a still page's change \(Double(intoSecond) / 1e6) ms into its second")
            }
        }
    }

    func testAMemberThatDoesNotKnowTheGroupTimeYetKeepsItsPageAndJoinsWhenItDoes() throws {
        let base: Int64 = 1_800_000_000_500_000_000
        let member = try Member(offset: base)
        member.timeline.known = false
        member.harness.stage.timeline = member.timeline
        member.harness.run(for: .seconds(3))
        XCTAssertEqual(member.harness.stage.currentPage, "red", "no group time, no turn: the loop waits for it")
        member.timeline.known = true
        member.harness.run(for: .milliseconds(300))
        // The group's time is base + the loop's: its position in the 3 s loop names the page.
        let now = Int64(member.harness.loop.now.nanoseconds) + base
        let expected = ["red", "green", "blue"][Int((now % 3_000_000_000) / 1_000_000_000)]
        XCTAssertEqual(member.harness.stage.currentPage, expected, "caught up at once")
    }

    /// Clocks show the group's time, not the kiosk's wall clock, and turn their second on the group's.
    func testClocksShowTheGroupsTime() throws {
        let h = try StageHarness(yaml: "widgets: [{id: c, type: clock, format: \"%H:%M:%S\", timezone: UTC, x: 0, y: 0, width: 100%, height: 100%}]\n",
                                 size: Self.size)
        h.settle()
        // 2023-11-14 22:13:20 is the harness's wall clock; the group's is 08:02:03.5 on 2027-01-15.
        XCTAssertEqual(h.stage.node(id: "c")?.clockText, "22:13:20")
        let group: Int64 = 1_800_000_123_500_000_000
        let timeline = OffsetTimeline(offset: group - Int64(h.loop.now.nanoseconds))
        h.stage.timeline = timeline
        h.settle()
        XCTAssertEqual(h.stage.node(id: "c")?.clockText, "08:02:03", "the group's time, at once")
        h.run(for: .milliseconds(600))
        XCTAssertEqual(h.stage.node(id: "c")?.clockText, "08:02:04", "the group's second, turned on the group's boundary")
        timeline.known = false
        h.run(for: .seconds(1))
        XCTAssertEqual(h.stage.node(id: "c")?.clockText, "22:13:20", "without the group's time, the wall clock again")
    }

    private static func parse(_ yaml: String) throws -> Scene {
        try SceneLoader.parse(data: Data(yaml.utf8), file: "loop.yaml", baseDirectory: "/tmp").scene
    }

    func testOnlyATimedLoopWithoutDaypartingRunsOnTheGroupClock() throws {
        let timed = try Self.parse("pages:\n  - {name: a, duration: 1.5, widgets: []}\n  - {name: b, duration: 0.5, widgets: []}\n")
        let loop = try XCTUnwrap(GroupPageLoop(scene: timed, schedule: timed.pageSchedule()))
        XCTAssertEqual(loop.position(at: 0).page, "a")
        XCTAssertEqual(loop.position(at: 1_600_000_000).page, "b")
        XCTAssertEqual(loop.position(at: 1_600_000_000).untilNext, 400_000_000)
        XCTAssertEqual(loop.position(at: -100_000_000).page, "b", "before the group clock's zero too")
        let untimed = try Self.parse("pages:\n  - {name: a, duration: 1, widgets: []}\n  - {name: b, widgets: []}\n")
        XCTAssertNil(GroupPageLoop(scene: untimed, schedule: untimed.pageSchedule()))
        let one = try Self.parse("pages:\n  - {name: a, duration: 1, widgets: []}\n")
        XCTAssertNil(GroupPageLoop(scene: one, schedule: one.pageSchedule()))
    }
}

/// `animate` with a start time (`at`) runs on the group clock: two members told to move a box at the same group time
/// show it at the same place for the same group time, one told after the start catches up at once, and a bad
/// request is refused when it is made, not when it was to start.
final class GroupAnimationTests: XCTestCase {
    static let scene = "widgets: [{id: box, type: rect, x: 0, y: 0, width: 20, height: 20, background: \"#ffffff\"}]\n"

    /// One member: its harness, its group timeline, and the box's x at each flip, by the flip's group time.
    final class Member {
        let harness: StageHarness
        let timeline: GroupTimelineTests.OffsetTimeline
        var shown: [(group: Int64, x: Int)] = []

        init(offset: Int64) throws {
            harness = try StageHarness(yaml: GroupAnimationTests.scene, size: GroupTimelineTests.size)
            timeline = GroupTimelineTests.OffsetTimeline(offset: offset)
            harness.stage.timeline = timeline
            let stage = harness.stage, timeline = self.timeline
            harness.listeners.append(harness.engine.addFlipListener { [unowned self] flip in
                guard let box = stage.node(id: "box") else { return }
                self.shown.append((Int64(flip.timestamp.nanoseconds) + timeline.offset, box.layer.frame.x))
            })
            harness.settle()
        }

        var groupNow: Int64 { Int64(harness.loop.now.nanoseconds) + timeline.offset }
    }

    func testMembersStartAnAnimationAtTheSameGroupTimeAndALateOneCatchesUp() throws {
        let base: Int64 = 1_800_000_000_000_000_000
        let a = try Member(offset: base)
        a.harness.run(for: .milliseconds(710))
        let b = try Member(offset: base + 710_000_000)
        // Told 0.5 s ahead on a's group time; b hears of it 0.8 s later, 0.3 s after the start.
        let start = a.groupNow + 500_000_000
        try a.harness.stage.animate(id: "box", property: "x", to: [100], .basic(duration: 1, timing: .linear), at: start)
        for _ in 0..<48 {
            a.harness.run(for: .nanoseconds(GroupTimelineTests.frame))
            b.harness.run(for: .nanoseconds(GroupTimelineTests.frame))
        }
        XCTAssertGreaterThan(b.groupNow, start + 300_000_000, "b is told after the start")
        try b.harness.stage.animate(id: "box", property: "x", to: [100], .basic(duration: 1, timing: .linear), at: start)
        let told = b.groupNow
        for _ in 0..<60 {
            a.harness.run(for: .nanoseconds(GroupTimelineTests.frame))
            b.harness.run(for: .nanoseconds(GroupTimelineTests.frame))
        }
        // Where the box must be at a group time: 100 px over the second from the start.
        func expected(_ group: Int64) -> Double { 100 * min(max(Double(group - start) / 1e9, 0), 1) }
        let before = a.shown.filter { $0.group < start - GroupTimelineTests.frame }
        XCTAssertFalse(before.isEmpty)
        XCTAssertTrue(before.allSatisfy { $0.x == 0 }, "nothing moves before the start: \(before.map(\.x))")
        var worst = 0.0
        for member in [a, b] {
            let during = member.shown.filter { $0.group >= start && $0.group <= start + 1_000_000_000 && (member !== b || $0.group > told + GroupTimelineTests.frame) }
            XCTAssertGreaterThan(during.count, 10)
            for sample in during { worst = max(worst, abs(Double(sample.x) - expected(sample.group))) }
            XCTAssertEqual(member.shown.last?.x, 100, "the animation ends on its value")
        }
        print("group animation: box position against the group time, worst \(worst) px (1.7 px is a frame's travel)")
        XCTAssertLessThanOrEqual(worst, 1.0, "each flip shows the motion as it is at the flip's group time")
        // b's first frame after it was told (past the one already in flight) is already 30 % of the way: it caught
        // up, not started over.
        let first = try XCTUnwrap(b.shown.first { $0.group > told + GroupTimelineTests.frame })
        XCTAssertGreaterThanOrEqual(first.x, 30)
    }

    func testBadTimedRequestsAreRefusedAtOnceAndANewerOneReplacesAWaitingOne() throws {
        let member = try Member(offset: 1_800_000_000_000_000_000)
        let stage = member.harness.stage
        XCTAssertThrowsError(try stage.animate(id: "box", property: "x", to: [1], .basic(duration: 1, timing: .linear),
                                               at: member.groupNow + 3_601_000_000_000)) { error in
            XCTAssertEqual((error as? StageError)?.code, .invalidArgument)
            XCTAssertTrue("\(error)".contains("at:"), "\(error)")
        }
        XCTAssertThrowsError(try stage.animate(id: "box", property: "opacity", to: [2], .basic(duration: 1, timing: .linear),
                                               at: member.groupNow + 10_000_000_000)) { error in
            XCTAssertTrue("\(error)".contains("0.0...1.0"), "checked now, not in 10 s: \(error)")
        }
        // A start 2 s ahead, then the same property moved now: the waiting one is dropped.
        try stage.animate(id: "box", property: "x", to: [80], .basic(duration: 0.1, timing: .linear), at: member.groupNow + 2_000_000_000)
        try stage.animate(id: "box", property: "x", to: [40], .basic(duration: 0.1, timing: .linear))
        member.harness.run(for: .seconds(3))
        XCTAssertEqual(stage.node(id: "box")?.layer.frame.x, 40, "the newer request won")
        // Without a group, `at` is on the wall clock.
        let alone = try StageHarness(yaml: Self.scene, size: GroupTimelineTests.size)
        alone.settle()
        let wall = alone.stage.builder.clockTime().nanoseconds
        try alone.stage.animate(id: "box", property: "x", to: [50], .basic(duration: 0.2, timing: .linear), at: wall + 1_000_000_000)
        alone.run(for: .milliseconds(900))
        XCTAssertEqual(alone.stage.node(id: "box")?.layer.frame.x, 0, "not yet on the wall clock")
        alone.run(for: .milliseconds(400))
        XCTAssertEqual(alone.stage.node(id: "box")?.layer.frame.x, 50)
    }
}
