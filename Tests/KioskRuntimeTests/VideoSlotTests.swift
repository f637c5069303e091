import Foundation
import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// The stage's video widgets with a fake player on the manual clock: frames reach the screen, a playlist moves on
/// past failures and loops, a video on a hidden page is paused, `duration: video` advances the page, and the
/// counters add up.
final class VideoSlotTests: XCTestCase {
    /// Plays what the test says: `emit` a frame or an event from the "decoder".
    final class FakePlayer: VideoPlayer {
        let request: VideoPlayerRequest
        var onFrame: ((VideoFrame) -> Void)?
        var onEvent: ((VideoPlayerEvent) -> Void)?
        var state = VideoPlaybackState.loading
        var position: Duration? = .zero
        var duration: Duration? = .seconds(1)
        var counts = VideoFrameCounts()
        var closed = false
        var seeks: [Duration] = []
        /// Told to loop with no gap (`loopSeamlessly`).
        var seamless = false

        init(_ request: VideoPlayerRequest) { self.request = request }

        func play() { state = .playing }
        func pause() { state = .paused }
        func seek(to position: Duration) { seeks.append(position); if state == .ended { state = .playing } }
        func close() { closed = true; onFrame = nil; onEvent = nil }
        func loopSeamlessly() { seamless = true }

        /// A frame of one colour; with `due`, shown at the vblank nearest that time, else at once.
        func frame(_ rgb: UInt32, timestamp: Duration = .zero, due: MonotonicInstant? = nil) {
            let surface = LayerSurface(size: request.size, isOpaque: true)
            for i in 0..<(surface.byteCount / 4) { surface.bytes.storeBytes(of: 0xFF00_0000 | rgb, toByteOffset: i * 4, as: UInt32.self) }
            counts.decoded += 1
            if state == .loading { state = .playing; onEvent?(.started) }
            onFrame?(VideoFrame(surface: surface, timestamp: timestamp, duration: .milliseconds(33), due: due))
        }

        func end() { state = .ended; onEvent?(.ended) }
        /// A seamless loop's first frame came again.
        func looped() { onEvent?(.looped) }
        func fail(_ message: String) { state = .failed; onEvent?(.failed(message: message)) }
    }

    final class FakeMaker: VideoPlayerMaking {
        var players: [FakePlayer] = []
        /// The duration each player says its clip has, by the clip's path.
        var duration: (String) -> Duration? = { _ in .seconds(1) }
        func makePlayer(_ request: VideoPlayerRequest) throws -> any VideoPlayer {
            let player = FakePlayer(request)
            player.duration = duration(request.source)
            players.append(player)
            return player
        }
        var last: FakePlayer { players.last! }
    }

    private var events: [VideoEventReport] = []
    private var pages: [String] = []

    private func harness(_ yaml: String) throws -> (StageHarness, FakeMaker) {
        let files = ["a.mp4": Data("a".utf8), "b.mp4": Data("b".utf8), "c.mp4": Data("c".utf8)]
        let h = try StageHarness(yaml: yaml, size: Size(width: 64, height: 48), files: files)
        let maker = FakeMaker()
        h.listeners.append(h.stage.addEventListener { [unowned self] event in
            switch event {
            case .video(let report): events.append(report)
            case .pageShown(let name): pages.append(name)
            default: break
            }
        })
        h.stage.videoPlayers = maker
        h.settle()
        return (h, maker)
    }

    func testFramesReachTheScreenAndAreCountedAsShown() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, source: a.mp4, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """)
        XCTAssertEqual(maker.players.count, 1)
        XCTAssertEqual(maker.last.request.size, Size(width: 64, height: 48))
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x0000FF, "the placeholder until the first frame")
        maker.last.frame(0xFF0000)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0xFF0000)
        maker.last.frame(0x00FF00)
        maker.last.frame(0x00FFFF)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x00FFFF, "the newest frame wins")
        XCTAssertEqual(events.map(\.kind), [.started])
        let totals = h.stage.videoFrameTotals
        XCTAssertEqual(totals.decoded, 3)
        XCTAssertEqual(totals.shown, 2)
        XCTAssertEqual(totals.dropped, 1, "the frame overtaken before any present")
        let state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["state"], .string("playing"))
        XCTAssertEqual(state["frames_shown"], .number(2))
    }

    func testAPlaylistSkipsAFailureShowsThePlaceholderAndLoops() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, playlist: [a.mp4, b.mp4, c.mp4], loop: true, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """)
        maker.last.frame(0xFF0000)
        h.settle()
        maker.last.end()
        h.settle()
        XCTAssertTrue(maker.players[0].closed)
        XCTAssertTrue(maker.last.request.source.hasSuffix("b.mp4"))
        maker.last.fail("qtdemux0: no moov atom")
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x0000FF, "the placeholder replaces the last frame")
        XCTAssertTrue(maker.last.request.source.hasSuffix("c.mp4"), "the next item plays")
        maker.last.frame(0x00FF00)
        maker.last.end()
        h.settle()
        XCTAssertTrue(maker.last.request.source.hasSuffix("a.mp4"), "back to the first item")
        XCTAssertEqual(events.map(\.kind), [.started, .error, .started, .looped])
        XCTAssertEqual(events[1].message, "qtdemux0: no moov atom")
        XCTAssertTrue(events[1].source.hasSuffix("b.mp4"))
    }

    /// GStreamer's end of stream comes when the decoder is done, before its last frames are on screen: `ended` is
    /// reported once the last frame has flipped, so a `duration: video` page never leaves before it.
    func testTheEndIsReportedOnceTheLastFrameIsOnScreen() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, source: a.mp4, loop: false, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """)
        var pixelAtEnd: UInt32?
        // Added after the harness's listener: both hear the end, the harness's first.
        h.listeners.append(h.stage.addEventListener { event in
            if case .video(let report) = event, report.kind == .ended { pixelAtEnd = try? h.pixel(x: 10, y: 10) & 0xFFFFFF }
        })
        maker.last.frame(0xFF0000)
        maker.last.end()
        XCTAssertFalse(events.contains { $0.kind == .ended }, "not while the last frame is still to be shown")
        h.settle()
        XCTAssertEqual(events.map(\.kind), [.started, .ended])
        XCTAssertEqual(pixelAtEnd, 0xFF0000, "the last frame was on screen when the end was reported")
    }

    /// A single looping clip is asked to loop with no gap; its loops are reported and it plays on, neither sought nor
    /// opened again. A playlist's items, and a clip that does not loop, are not.
    func testASingleLoopingClipLoopsSeamlesslyAndPlaysOn() throws {
        let (h, maker) = try harness("""
        pages:
          - name: loop
            widgets:
              - {id: v, type: video, source: a.mp4, loop: true, x: 0, y: 0, width: 100%, height: 100%}
          - name: once
            widgets:
              - {id: w, type: video, source: b.mp4, loop: false, x: 0, y: 0, width: 100%, height: 100%}
          - name: list
            widgets:
              - {id: p, type: video, playlist: [a.mp4, b.mp4], loop: true, x: 0, y: 0, width: 100%, height: 100%}
        """)
        let clip = maker.last
        XCTAssertTrue(clip.seamless)
        clip.frame(0xFF0000, timestamp: .milliseconds(966))
        clip.looped()
        clip.frame(0x00FF00, timestamp: .zero)
        h.settle()
        XCTAssertEqual(events.map(\.kind), [.started, .looped])
        XCTAssertEqual(maker.players.count, 1, "not opened again")
        XCTAssertTrue(clip.seeks.isEmpty, "not sought")
        XCTAssertFalse(clip.closed)
        XCTAssertEqual(try h.pixel(x: 1, y: 1), 0x00FF00, "the next loop's frames are shown")
        try h.stage.showPage("once", transition: nil)
        h.settle()
        XCTAssertFalse(maker.last.seamless, "a clip that plays once")
        try h.stage.showPage("list", transition: nil)
        h.settle()
        XCTAssertFalse(maker.last.seamless, "a playlist's item")
    }

    func testEveryItemFailingStopsOnThePlaceholder() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, playlist: [a.mp4, b.mp4], loop: true, x: 0, y: 0, width: 100%, height: 100%}
        """)
        defer { withExtendedLifetime(h) {} }
        maker.last.fail("one")
        maker.last.fail("two")
        XCTAssertEqual(maker.players.count, 2, "no endless retry once every item failed in a row")
        XCTAssertEqual(events.map(\.kind), [.error, .error])
        XCTAssertEqual(try h.stage.videoState(id: "v")["state"], .string("failed"))
        XCTAssertEqual(try h.stage.videoState(id: "v")["error"], .string("two"))
    }

    func testAVideoOnAHiddenPageIsPausedAndDurationVideoAdvances() throws {
        let (h, maker) = try harness("""
        pages:
          - name: film
            duration: video
            widgets:
              - {id: v, type: video, source: a.mp4, loop: false, x: 0, y: 0, width: 100%, height: 100%}
          - name: other
            widgets:
              - {id: w, type: video, source: b.mp4, x: 0, y: 0, width: 100%, height: 100%}
        """)
        XCTAssertEqual(maker.players.count, 1, "the other page's video opens only when shown")
        let film = maker.last
        film.frame(0xFF0000)
        film.end()
        h.settle()
        XCTAssertEqual(pages, ["other"], "the page advanced when its clip ended")
        XCTAssertEqual(film.state, .paused, "the hidden page's video is paused")
        XCTAssertEqual(maker.players.count, 2)
        XCTAssertTrue(maker.last.request.source.hasSuffix("b.mp4"))
        try h.stage.showPage("film", transition: nil)
        XCTAssertEqual(maker.players.count, 3, "the film starts over when its page is shown again")
        XCTAssertEqual(maker.players[1].state, .paused)
        XCTAssertEqual(maker.last.state, .loading)
    }

    func testCommandsNameTheWidget() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, source: a.mp4, x: 0, y: 0, width: 50%, height: 100%}
          - {id: w, type: video, source: b.mp4, x: 50%, y: 0, width: 50%, height: 100%}
        """)
        XCTAssertThrowsError(try h.stage.playVideo(id: nil)) { XCTAssertEqual(($0 as? StageError)?.code, .invalidArgument) }
        XCTAssertThrowsError(try h.stage.pauseVideo(id: "x")) { XCTAssertEqual(($0 as? StageError)?.code, .notFound) }
        try h.stage.pauseVideo(id: "w")
        XCTAssertEqual(maker.players[1].state, .paused)
        try h.stage.seekVideo(id: "w", to: .seconds(2))
        XCTAssertEqual(maker.players[1].seeks, [.seconds(2)])
        try h.stage.loadVideo(id: "v", source: "/tmp/other.mp4")
        XCTAssertEqual(maker.last.request.source, "/tmp/other.mp4")
        XCTAssertTrue(maker.players[0].closed)
        XCTAssertEqual(try h.stage.videoState(id: "v")["source"], .string("/tmp/other.mp4"))
    }
}

extension VideoSlotTests {
    func testWidgetSetKeepsThePausedFrameAndReopensAtANewSize() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, source: a.mp4, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """)
        maker.last.frame(0xFF0000)
        try h.stage.pauseVideo(id: "v")
        h.settle()
        try h.setWidget(id: "v", properties: ["opacity": .number(1), "background": .string("#00ff00")])
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0xFF0000, "the paused frame stays over the new placeholder")
        XCTAssertEqual(maker.players.count, 1)

        maker.last.position = .seconds(3)
        try h.setWidget(id: "v", properties: ["width": .string("50%")])
        XCTAssertEqual(maker.players.count, 2, "a new size opens the clip again")
        XCTAssertEqual(maker.last.request.size, Size(width: 32, height: 48))
        XCTAssertEqual(maker.last.seeks, [.seconds(3)], "where it was")
        XCTAssertEqual(maker.last.state, .paused, "and still paused")
    }
}

extension VideoSlotTests {
    func testAnItemThatNeverStartsFailsAfterTheTimeoutAndTheNextPlays() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, playlist: [a.mp4, b.mp4], loop: false, x: 0, y: 0, width: 100%, height: 100%}
        """)
        h.run(for: .seconds(9))
        XCTAssertEqual(maker.players.count, 1, "still waiting")
        h.run(for: .seconds(2))
        XCTAssertEqual(events.map(\.kind), [.error])
        XCTAssertTrue(events.first?.message?.hasPrefix("no frame within 10") == true, events.first?.message ?? "")
        XCTAssertEqual(maker.players.count, 2)
        maker.last.frame(0x00FF00)
        h.run(for: .seconds(20))
        XCTAssertEqual(events.map(\.kind), [.error, .started], "a started item has no deadline")
    }
}

extension VideoSlotTests {
    /// Frames handed over ahead of time are shown at the vblank nearest their due time on the display's timeline
    /// (the headless backend's vblanks on the manual clock), not when they arrive; one superseded before any vblank
    /// could show it is counted as dropped; a paused seek's frame is shown at once; and once nothing waits the
    /// display link stops.
    func testFramesAreShownAtTheVblankNearestTheirDueTime() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, source: a.mp4, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """)
        let period = h.backend.info.mode.frameDuration
        let t = h.loop.now
        let player = maker.last
        let colours: [UInt32] = [0xFF0000, 0x00FF00, 0xFFFF00]
        // Handed over together, due 100, 133 and 166 ms from now: the decoder's lead.
        for (i, colour) in colours.enumerated() {
            player.frame(colour, timestamp: .milliseconds(Int64(i) * 33), due: t + .milliseconds(100 + Int64(i) * 33))
        }
        var firstSeen: [UInt32: MonotonicInstant] = [:]
        while h.loop.now < t + .milliseconds(300) {
            h.run(for: period)
            let shown = try h.pixel(x: 10, y: 10) & 0xFFFFFF
            if firstSeen[shown] == nil, let flip = h.backend.lastFlip { firstSeen[shown] = flip.timestamp }
        }
        for (i, colour) in colours.enumerated() {
            let due = t + .milliseconds(100 + Int64(i) * 33)
            let at = try XCTUnwrap(firstSeen[colour], "frame \(i) was shown")
            let off = at > due ? at - due : due - at
            XCTAssertLessThanOrEqual(off, period / 2, "frame \(i) due at \(due) reached the screen at the vblank of \(at)")
        }
        XCTAssertEqual(h.stage.videoFrameTotals.shown, 3)
        XCTAssertEqual(h.stage.videoFrameTotals.dropped, 0)
        XCTAssertFalse(h.engine.isAnimating, "nothing waits: the display link stops")

        // Two frames due within the same refresh: the newer supersedes the older before any vblank shows it.
        let u = h.loop.now
        player.frame(0x00FFFF, timestamp: .milliseconds(200), due: u + .milliseconds(50))
        player.frame(0xFF00FF, timestamp: .milliseconds(233), due: u + .milliseconds(52))
        h.run(for: .milliseconds(100))
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0xFF00FF)
        XCTAssertEqual(h.stage.videoFrameTotals.dropped, 1, "the superseded frame is counted")

        // Paused and sought: the prerolled frame (no due time) is shown at the next present and replaces any
        // frame still waiting.
        player.frame(0x808080, timestamp: .milliseconds(266), due: h.loop.now + .seconds(1))
        try h.stage.pauseVideo(id: "v")
        player.frame(0x404040, timestamp: .seconds(5))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x404040)
        h.run(for: .seconds(2))
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x404040, "the frame that was waiting never comes back")
        XCTAssertEqual(h.stage.videoFrameTotals.dropped, 2)
        XCTAssertFalse(h.engine.isAnimating, "a paused video costs no frames")
    }

    /// A clip's first frames come together as the pipeline starts, the first due at once and the next a frame later,
    /// while the output is idle: the display link's first tick is a flip away, and by its vblank the second frame is
    /// due too. The first goes out at once, so it is not superseded.
    func testTheFirstFrameDueWhileIdleIsShownAtOnceAndNotSuperseded() throws {
        let (h, maker) = try harness("""
        widgets:
          - {id: v, type: video, source: a.mp4, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}
        """)
        XCTAssertFalse(h.engine.isAnimating)
        let t = h.loop.now
        maker.last.frame(0xFF0000, timestamp: .zero, due: t)
        maker.last.frame(0x00FF00, timestamp: .milliseconds(33), due: t + .milliseconds(33))
        h.settleNow()
        XCTAssertTrue(h.backend.isFlipPending, "the first frame presented at once, not at the first tick")
        h.run(for: .milliseconds(100))
        XCTAssertEqual(try h.pixel(x: 10, y: 10) & 0xFFFFFF, 0x00FF00)
        XCTAssertEqual(h.stage.videoFrameTotals.shown, 2)
        XCTAssertEqual(h.stage.videoFrameTotals.dropped, 0, "the first frame was not superseded")
    }
}
