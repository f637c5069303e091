import Foundation
import KioskCore
import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// A video widget's failure policy on the manual clock, with a fault-injecting player maker: a network item that
/// fails is tried again at jittered backoff delays until it plays, a success starts the backoff over, a failed
/// network item never stalls the rest of its playlist, files that fail are not retried, and a scheme outside
/// `video.allowed_schemes` is never opened.
final class VideoRetryTests: XCTestCase {
    typealias FakePlayer = VideoSlotTests.FakePlayer

    /// Fails the first opens of each source as many times as `failures` says ("Could not connect"), then plays it:
    /// a stream that comes back once the network and the server are up. As with GStreamer, the outcome comes a
    /// little after the player is made, on the loop. Records when each player was made.
    final class FlakyMaker: VideoPlayerMaking {
        let loop: MainLoop
        var failures: [String: Int]
        static let outcomeAfter = Duration.milliseconds(50)
        private(set) var players: [FakePlayer] = []
        private(set) var opened: [(source: String, at: MonotonicInstant)] = []

        init(loop: MainLoop, failures: [String: Int]) {
            self.loop = loop
            self.failures = failures
        }

        func makePlayer(_ request: VideoPlayerRequest) throws -> any VideoPlayer {
            let player = FakePlayer(request)
            players.append(player)
            opened.append((request.source, loop.now))
            let fails = failures[request.source, default: 0] > 0
            if fails { failures[request.source]! -= 1 }
            _ = loop.addTimer(after: Self.outcomeAfter) { [weak player] in
                guard let player, !player.closed else { return }
                if fails { player.fail("Could not connect to 127.0.0.1: Connection refused") } else { player.frame(0x00FF00) }
            }
            return player
        }

        /// Time between one open and the next.
        var gaps: [Duration] { zip(opened, opened.dropFirst()).map { $1.at - $0.at } }
    }

    /// Hands out the draws given, in turn, then the middle.
    final class Draws {
        var values: [Double]
        init(_ values: [Double]) { self.values = values }
        func next() -> Double { values.isEmpty ? 0.5 : values.removeFirst() }
    }

    private var events: [VideoEventReport] = []
    /// A stream: `https` and `http` items are downloaded into the asset cache, not streamed, so streams are RTSP
    /// (allowed by `streaming`).
    private let stream = "rtsp://127.0.0.1:9/live"
    private let streaming = SceneLimits(videoSchemes: VideoSchemes(["file", "https", "http", "rtsp"]))

    /// `limits` for the stage: `streaming` unless given.
    private func harness(_ widget: String, failures: [String: Int], random: @escaping () -> Double,
                         limits: SceneLimits? = nil) throws -> (StageHarness, FlakyMaker) {
        let files = ["a.mp4": Data("a".utf8), "b.mp4": Data("b".utf8)]
        let h = try StageHarness(yaml: "widgets:\n  - {id: v, type: video, \(widget), x: 0, y: 0, width: 100%, height: 100%}\n",
                                 size: Size(width: 64, height: 48), files: files, limits: limits ?? streaming, sceneLimits: streaming)
        let resolved = Dictionary(uniqueKeysWithValues: failures.map { (h.directory.appendingPathComponent($0.key).path, $0.value) })
        let maker = FlakyMaker(loop: h.loop, failures: failures.merging(resolved) { a, _ in a })
        h.listeners.append(h.stage.addEventListener { [unowned self] event in
            if case .video(let report) = event { events.append(report) }
        })
        h.stage.videoRetryBackoff = RetryBackoff(random: random)
        h.stage.videoPlayers = maker
        return (h, maker)
    }

    func testAFailedStreamIsRetriedAtTheJitteredDelaysUntilItPlays() throws {
        let draws = Draws([0, 1, 0.5])
        let (h, maker) = try harness("source: \"\(stream)\"", failures: [stream: 3], random: draws.next)
        h.run(for: .seconds(10))
        let outcome = FlakyMaker.outcomeAfter
        // The draws put the delays at the bottom of the first step, the top of the second, the middle of the third.
        XCTAssertEqual(maker.gaps, [outcome + .milliseconds(750), outcome + .milliseconds(2500), outcome + .seconds(4)])
        XCTAssertEqual(events.map(\.kind), [.error, .error, .error, .started])
        XCTAssertEqual(events.first?.message, "Could not connect to 127.0.0.1: Connection refused")
        XCTAssertTrue(events.allSatisfy { $0.source == stream })
        let state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["state"], .string("playing"))
        XCTAssertEqual(state["error"], .null)
        XCTAssertEqual(state["retry_in"], .null)
        XCTAssertEqual(maker.players.count, 4)
    }

    /// With a seeded random source, as on a kiosk: every delay falls within ±25 % of its step and under the 60 s
    /// cap, and `video.state` says when the next try comes.
    func testRandomDelaysStayWithinTheirStepsAndTheCap() throws {
        var generator = SplitMix(seed: 2024)
        let (h, maker) = try harness("source: \"\(stream)\"", failures: [stream: 10], random: { Double.random(in: 0...1, using: &generator) })
        h.run(for: .milliseconds(100))
        let pending = try h.stage.videoState(id: "v")
        XCTAssertEqual(pending["state"], .string("failed"))
        guard case .number(let retryIn)? = pending["retry_in"] else { return XCTFail("no retry_in while a retry is pending: \(pending)") }
        XCTAssertTrue((0.7...1.25).contains(retryIn), "retry_in \(retryIn)")

        h.run(for: .seconds(8 * 60))
        XCTAssertEqual(maker.players.count, 11, "ten failures, then the play")
        let reference = RetryBackoff()
        for (failure, gap) in maker.gaps.enumerated() {
            let delay = gap - FlakyMaker.outcomeAfter
            XCTAssertTrue(reference.bounds(after: failure).contains(delay), "retry \(failure + 1): \(delay) outside \(reference.bounds(after: failure))")
        }
        XCTAssertEqual(events.last?.kind, .started)
    }

    func testASuccessStartsTheBackoffOver() throws {
        let (h, maker) = try harness("source: \"\(stream)\"", failures: [stream: 4], random: { 0.5 })
        h.run(for: .seconds(30))
        XCTAssertEqual(maker.gaps.map { $0 - FlakyMaker.outcomeAfter }, [1, 2, 4, 8].map { Duration.seconds($0) })
        XCTAssertEqual(events.last?.kind, .started)
        // The stream drops while playing (the network went away), and stays down for a while.
        maker.failures[stream] = 2
        let dropped = h.loop.now
        maker.players.last?.fail("Server returned 503 Service Unavailable")
        h.run(for: .seconds(10))
        XCTAssertEqual(maker.players.count, 8)
        XCTAssertEqual(maker.opened[5].at - dropped, .seconds(1), "1 s after the drop: the backoff began again")
        XCTAssertEqual(maker.gaps.suffix(2).map { $0 - FlakyMaker.outcomeAfter }, [.seconds(2), .seconds(4)])
        XCTAssertEqual(events.map(\.kind), [.error, .error, .error, .error, .started, .error, .error, .error, .started])
    }

    /// A stream that is down does not hold up the clips after it: each comes at once, and the stream is tried again
    /// when its turn comes round, with no backoff while the rest of the playlist plays.
    func testAFailedStreamDoesNotStallThePlaylist() throws {
        let (h, maker) = try harness("playlist: [\"\(stream)\", a.mp4, b.mp4], loop: true", failures: [stream: 100], random: { 0.5 })
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.opened.map(\.source), [stream, h.directory.appendingPathComponent("a.mp4").path])
        XCTAssertEqual(maker.gaps, [FlakyMaker.outcomeAfter], "the next item opened the moment the stream failed")
        maker.players.last?.end()
        h.run(for: .milliseconds(200))
        maker.players.last?.end()
        h.run(for: .milliseconds(200))
        let (a, b) = (h.directory.appendingPathComponent("a.mp4").path, h.directory.appendingPathComponent("b.mp4").path)
        XCTAssertEqual(maker.opened.map(\.source), [stream, a, b, stream, a], "round again: the stream, then the first clip")
        XCTAssertEqual(maker.gaps.last, FlakyMaker.outcomeAfter, "at once")
        XCTAssertEqual(events.map(\.kind), [.error, .started, .started, .looped, .error, .started])
        XCTAssertEqual(try h.stage.videoState(id: "v")["retry_in"], .null, "no backoff while another item plays")
    }

    /// When every item fails, the playlist is tried again after the backoff, from the item after the last failed.
    func testWhenEveryItemFailsThePlaylistIsTriedAgainAfterTheBackoff() throws {
        let a = "a.mp4"
        let (h, maker) = try harness("playlist: [\"\(stream)\", a.mp4], loop: true", failures: [stream: 2, a: 1], random: { 0 })
        h.run(for: .seconds(5))
        let clip = h.directory.appendingPathComponent(a).path
        XCTAssertEqual(maker.opened.map(\.source), [stream, clip, stream, clip])
        XCTAssertEqual(maker.gaps, [FlakyMaker.outcomeAfter, FlakyMaker.outcomeAfter + .milliseconds(750), FlakyMaker.outcomeAfter])
        XCTAssertEqual(events.map(\.kind), [.error, .error, .error, .started], "the clip played after the stream failed again")
        XCTAssertEqual(events.last?.source, clip)
    }

    /// Files fail the same way every time: once every item of a playlist of files has failed, nothing is tried
    /// again, however long the kiosk runs.
    func testFailedFilesAreNotRetried() throws {
        let (h, maker) = try harness("playlist: [a.mp4, b.mp4], loop: true", failures: ["a.mp4": 100, "b.mp4": 100], random: { 0.5 })
        h.run(for: .seconds(3600))
        XCTAssertEqual(maker.players.count, 2)
        XCTAssertEqual(events.map(\.kind), [.error, .error])
        XCTAssertEqual(try h.stage.videoState(id: "v")["state"], .string("failed"))
        XCTAssertEqual(try h.stage.videoState(id: "v")["retry_in"], .null)
    }

    /// `video.load` refuses a scheme outside the list before touching the widget; a scene's item the stage's list
    /// does not allow (a scene made with other limits) is never opened, reported, and not retried.
    func testASchemeOutsideTheListIsNeverOpened() throws {
        let (h, maker) = try harness("source: a.mp4", failures: [:], random: { 0.5 }, limits: SceneLimits())
        h.run(for: .milliseconds(100))
        for source in ["rtsp://camera.lan/stream", "FTP://host/a.mp4", "data:video/mp4;base64,AAAA", "v4l2:///dev/video0"] {
            XCTAssertThrowsError(try h.stage.loadVideo(id: "v", source: source)) { error in
                let stageError = error as? StageError
                XCTAssertEqual(stageError?.code, .invalidArgument)
                let scheme = String(source.prefix { $0 != ":" }).lowercased()
                XCTAssertEqual(stageError?.message, "scheme '\(scheme)' is not allowed (video.allowed_schemes: file, https, http)")
            }
        }
        XCTAssertEqual(maker.players.count, 1, "the clip plays on")
        XCTAssertEqual(try h.stage.videoState(id: "v")["state"], .string("playing"))

        events = []
        let (strict, strictMaker) = try harness("source: \"http://127.0.0.1:9/live.webm\"", failures: [:], random: { 0.5 },
                                                limits: SceneLimits(videoSchemes: VideoSchemes(["file"])))
        strict.run(for: .seconds(600))
        XCTAssertEqual(strictMaker.players.count, 0)
        XCTAssertEqual(events.map(\.kind), [.error])
        XCTAssertEqual(events.first?.message, "scheme 'http' is not allowed (video.allowed_schemes: file)")
        XCTAssertEqual(try strict.stage.videoState(id: "v")["error"], .string("scheme 'http' is not allowed (video.allowed_schemes: file)"))
    }

    /// The asset cache as a stage sees it: the files the test says are whole.
    final class FakeCache: RemoteAssetSource {
        var files: [String: String] = [:]
        private(set) var asked = 0
        func file(for url: String) -> String? { files[url] }
        func stageAssetsChanged() { asked += 1 }
    }

    /// An item by URL with no copy yet is passed over, never opened from the network; once its copy is whole it
    /// plays from the cached file at its next turn, and events name the URL.
    func testAClipByURLIsPassedOverUntilItsCopyIsWholeThenPlaysFromIt() throws {
        let url = "https://cdn.example/menu.webm"
        let (h, maker) = try harness("playlist: [\"\(url)\", b.mp4], loop: true", failures: [:], random: { 0.5 })
        let cache = FakeCache()
        h.stage.builderRemoteAssets = cache
        h.stage.videoPlayers = maker
        h.run(for: .milliseconds(200))
        // Setting the players again (after the harness's) started the widget over: count from here.
        let b = h.directory.appendingPathComponent("b.mp4").path
        let first = maker.opened.count - 1
        XCTAssertEqual(maker.opened.map(\.source).last, b, "the clip after it plays meanwhile")
        maker.players.last?.end()
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.opened.dropFirst(first).map(\.source), [b, b], "round again: still no copy, the clip again")

        cache.files[url] = "/var/cache/kioskd/assets/copy.webm"
        h.stage.remoteAssetChanged(url)
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.opened.count, first + 2, "the clip playing is not cut")
        maker.players.last?.end()
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.opened.dropFirst(first).map(\.source), [b, b, "/var/cache/kioskd/assets/copy.webm"], "the copy at the item's turn")
        XCTAssertFalse(maker.opened.contains { $0.source == url }, "the URL itself is never opened")
        XCTAssertEqual(events.last?.kind, .started)
        XCTAssertEqual(events.last?.source, url)
    }

    /// A lone item by URL with no copy: the placeholder and `waiting` naming the download, no error, no player;
    /// the copy's arrival plays it.
    func testALoneClipByURLWaitsForItsDownload() throws {
        let url = "https://cdn.example/only.webm"
        let (h, maker) = try harness("source: \"\(url)\"", failures: [:], random: { 0.5 })
        let cache = FakeCache()
        h.stage.builderRemoteAssets = cache
        h.stage.videoPlayers = maker
        h.run(for: .seconds(60))
        let state = try h.stage.videoState(id: "v")
        XCTAssertEqual(state["state"], .string("waiting"))
        XCTAssertEqual(state["waiting"], .string("waiting for the download of \(url)"))
        XCTAssertEqual(maker.players.count, 0)
        XCTAssertEqual(events.filter { $0.kind == .error }.count, 0)
        XCTAssertEqual(h.stage.remoteAssets, [url: 300])

        cache.files[url] = "/cache/only.webm"
        h.stage.remoteAssetChanged(url)
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.opened.map(\.source), ["/cache/only.webm"])
        XCTAssertEqual(try h.stage.videoState(id: "v")["state"], .string("playing"))

        // video.load of another clip by URL: the stage's URLs follow, and the cache is told.
        try h.stage.loadVideo(id: "v", source: "https://cdn.example/other.webm")
        XCTAssertEqual(cache.asked, 1)
        XCTAssertEqual(h.stage.remoteAssets["https://cdn.example/other.webm"], 300)
    }

    /// A one-clip loop by URL seeks back to the start while its copy stays the same; a new version that arrived
    /// while it played is opened at its next start, never cut in mid-clip.
    func testANewVersionOfALoopingClipIsOpenedAtItsNextStart() throws {
        let url = "https://cdn.example/loop.webm"
        let (h, maker) = try harness("source: \"\(url)\", loop: true", failures: [:], random: { 0.5 })
        let cache = FakeCache()
        cache.files[url] = "/cache/v1.webm"
        h.stage.builderRemoteAssets = cache
        h.stage.videoPlayers = maker
        h.run(for: .milliseconds(200))
        let first = maker.players.count
        XCTAssertEqual(maker.opened.last?.source, "/cache/v1.webm")
        maker.players.last?.end()
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.players.count, first, "the same copy: the loop seeks")
        XCTAssertEqual(maker.players.last?.seeks, [.zero])

        cache.files[url] = "/cache/v2.webm"
        h.stage.remoteAssetChanged(url)
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.players.count, first, "the clip playing is not cut")
        maker.players.last?.end()
        h.run(for: .milliseconds(200))
        XCTAssertEqual(maker.opened.last?.source, "/cache/v2.webm", "the new version at the loop's next start")
        XCTAssertEqual(maker.players.count, first + 1)
    }
}
