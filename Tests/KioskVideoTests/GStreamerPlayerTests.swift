import Foundation
import KioskCore
import KioskTestSupport
import KioskVideo
import XCTest

/// `GStreamerPlayer` on a real epoll loop with clips made by GStreamer at test time: frames arrive on the main
/// thread, scaled to the requested size, in timestamp order, and the clip's end and failures come as events.
final class GStreamerPlayerTests: XCTestCase {
    private final class Recorder {
        var frames: [VideoFrame] = []
        /// When each frame reached the main thread.
        var arrivals: [MonotonicInstant] = []
        var events: [VideoPlayerEvent] = []
    }

    private func play(_ source: String, size: Size = Size(width: 160, height: 120), fit: VideoFit = .contain,
                      until done: (Recorder) -> Bool, timeout: Double = 30,
                      prepare: (any VideoPlayer) -> Void = { _ in }) throws -> (Recorder, any VideoPlayer) {
        let loop = try MainLoop.epoll()
        let video = try GStreamerVideo(loop: loop)
        let player = try video.makePlayer(VideoPlayerRequest(source: source, size: size, fit: fit, muted: true, volume: 1))
        prepare(player)
        let recorder = Recorder()
        player.onFrame = { recorder.frames.append($0); recorder.arrivals.append(.now()) }
        player.onEvent = { recorder.events.append($0) }
        do {
            try Poll.until("the clip to play as awaited", timeout: timeout, turning: loop, every: .milliseconds(50)) { done(recorder) }
        } catch {
            // The player is handed back all the same, for the caller to close.
            XCTFail("\(error): frames \(recorder.frames.count), events \(recorder.events)")
        }
        return (recorder, player)
    }

    func testPlaysAClipToItsEndWithFramesInOrder() throws {
        for codec in [TestClips.Codec.h264, .vp9] {
            let clip = try TestClips.clip(codec, width: 320, height: 240, frames: 30)
            let (recorder, player) = try play(clip) { $0.events.contains(.ended) }
            defer { player.close() }
            XCTAssertEqual(recorder.events.first, .started, "\(codec)")
            XCTAssertEqual(player.state, .ended, "\(codec)")
            XCTAssertGreaterThan(recorder.frames.count, 20, "\(codec): a one-second clip shows most of its 30 frames")
            let stamps = recorder.frames.map(\.timestamp)
            XCTAssertEqual(stamps, stamps.sorted(), "\(codec): frames arrive in timestamp order")
            // Each frame is due on CLOCK_MONOTONIC as far after the first as its timestamp is (the pipeline's running
            // time mapped onto the display's clock), and frames are handed over ahead of their due time.
            let dues = recorder.frames.compactMap(\.due)
            XCTAssertEqual(dues.count, recorder.frames.count, "\(codec): every played frame has a due time")
            if let firstDue = dues.first, let firstStamp = stamps.first {
                for (due, stamp) in zip(dues, stamps) {
                    let off = (due - firstDue) - (stamp - firstStamp)
                    XCTAssertLessThan(abs(off.milliseconds), 5, "\(codec): frame at \(stamp) due \(due - firstDue) after the first")
                }
            }
            XCTAssertTrue(zip(dues, recorder.arrivals).contains { $0 > $1 }, "\(codec): frames come before they are due")
            XCTAssertEqual(recorder.frames.first?.surface.size, Size(width: 160, height: 120))
            XCTAssertTrue(recorder.frames.first?.surface.isOpaque ?? false)
            XCTAssertLessThanOrEqual(recorder.frames.count, player.counts.decoded, "\(codec)")
            XCTAssertGreaterThanOrEqual(recorder.frames.count + player.counts.dropped, 29,
                                        "\(codec): every frame of the clip was handed over or counted as dropped")
            if let duration = player.duration {
                XCTAssertEqual(Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18, 1, accuracy: 0.1)
            } else {
                XCTFail("\(codec): no duration")
            }
        }
    }

    /// A clip told to loop seamlessly goes on from its start at its end, with its first frame due one frame after its
    /// last: no frame is held while it goes back, and it never ends.
    func testASeamlessLoopHasNoGapBetweenTheLastFrameAndTheFirst() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 30)
        let (recorder, player) = try play(clip) { recorder in
            // Two loops, and the first frames of the second: each loop is said as its first frame comes.
            let restarts = zip(recorder.frames, recorder.frames.dropFirst()).filter { $1.timestamp < $0.timestamp }.count
            XCTAssertEqual(recorder.events.filter { $0 == .looped }.count, restarts, "a loop is said when its first frame comes")
            return restarts >= 2 && recorder.frames.last.map { $0.timestamp > .milliseconds(100) } == true
        } prepare: { $0.loopSeamlessly() }
        defer { player.close() }
        XCTAssertFalse(recorder.events.contains(.ended), "a seamless loop never ends: \(recorder.events)")
        // Where the timestamps start again, and the due times across each restart.
        let frames = recorder.frames
        var seams = 0
        for i in frames.indices.dropFirst() where frames[i].timestamp < frames[i - 1].timestamp {
            seams += 1
            let gap = try XCTUnwrap(frames[i].due) - XCTUnwrap(frames[i - 1].due)
            XCTAssertLessThan(gap.milliseconds, 50, "the first frame of a loop is due one frame after the last (\(gap))")
            XCTAssertGreaterThan(gap.milliseconds, 16, "and not at once (\(gap))")
            XCTAssertLessThan(frames[i].timestamp, .milliseconds(40), "a loop starts at the clip's start")
        }
        XCTAssertGreaterThanOrEqual(seams, 2, "frames crossed two loops' seams: \(frames.map(\.timestamp))")
    }

    /// GStreamer's streaming threads, and the decoder threads they start, run nicer than the thread that made the
    /// player (as the render workers do), so a busy decoder does not hold back the main loop that shows its frames.
    func testStreamingThreadsRunBelowTheMainThreadsPriority() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 60)
        func nice(_ task: String) -> Int? {
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // Fields after the command: state is field 3, nice field 19.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 16 ? Int(fields[16]) : nil
        }
        func name(_ task: String) -> String {
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        // Tests run on the process's main thread, whose task id is the process id.
        let mainNice = try XCTUnwrap(nice(String(getpid())))
        var streaming: [(String, Int)] = []
        let (_, player) = try play(clip) { _ in
            // GStreamer names a streaming thread after its pad ("qtdemux0:sink", "multiqueue0:src_0", ...).
            streaming = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { task in
                let n = name(task)
                return n.contains(":") ? nice(task).map { (n, $0) } : nil
            }
            return streaming.count >= 2
        }
        defer { player.close() }
        XCTAssertGreaterThanOrEqual(streaming.count, 2, "GStreamer's streaming threads are running")
        for (thread, value) in streaming {
            XCTAssertEqual(value, min(19, mainNice + 5), "\(thread) runs 5 nicer than the main thread")
        }
    }

    func testMissingAndCorruptFilesFailWithTheDecodersMessage() throws {
        for source in ["/nonexistent/clip.mp4", try TestClips.corrupt()] {
            let (recorder, player) = try play(source) { recorder in
                recorder.events.contains { if case .failed = $0 { true } else { false } }
            }
            defer { player.close() }
            XCTAssertTrue(recorder.frames.isEmpty, source)
            XCTAssertEqual(player.state, .failed)
            guard case .failed(let message)? = recorder.events.last else { return XCTFail("no failure for \(source)") }
            XCTAssertFalse(message.isEmpty)
        }
    }

    func testPauseStopsFramesAndSeekWhilePausedShowsTheFrameThere() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 90)
        let loop = try MainLoop.epoll()
        let video = try GStreamerVideo(loop: loop)
        let player = try video.makePlayer(VideoPlayerRequest(source: clip, size: Size(width: 160, height: 120), fit: .fill, muted: true, volume: 1))
        defer { player.close() }
        var frames: [VideoFrame] = []
        player.onFrame = { frames.append($0) }
        try Poll.until("five frames", timeout: 20, turning: loop) { frames.count >= 5 }
        player.pause()
        XCTAssertEqual(player.state, .paused)
        // Frames already due may still be in the mailbox: they stop coming (none for 0.3 s), and then, in a further
        // 0.5 s (no event announces that nothing came), nothing more comes.
        try Poll.until("a position", timeout: 20, turning: loop) { player.position != nil }
        var seen = frames.count, lastArrival = ContinuousClock.now
        try Poll.until("frames to stop coming after the pause", timeout: 10, turning: loop) {
            if frames.count != seen {
                seen = frames.count
                lastArrival = .now
            }
            return ContinuousClock.now - lastArrival >= .milliseconds(300)
        }
        let countPaused = frames.count
        let quiet = ContinuousClock.now + .milliseconds(500)
        while ContinuousClock.now < quiet { loop.runOnce(timeout: .milliseconds(20)) }
        XCTAssertEqual(frames.count, countPaused, "a paused clip delivers no frames")

        player.seek(to: .milliseconds(2000))
        try Poll.until("the frame at the seek position", timeout: 20, turning: loop) { frames.count > countPaused }
        XCTAssertEqual(frames.count, countPaused + 1)
        XCTAssertEqual(frames.last?.timestamp, .milliseconds(2000), "the frame shown is the one at 2 s")
        XCTAssertEqual(player.state, .paused)
    }
}
