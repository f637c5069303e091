import Foundation
import KioskTestSupport
import XCTest

/// The `video` widget end to end on a headless `kioskd run`, with clips GStreamer makes at test time: events,
/// counters, the frame on screen at a chosen time against GStreamer's own decode of it, broken and missing files
/// in a playlist, and a page that lasts as long as its clip. The video commands are `KioskAppTests.VideoCommandTests`'.
final class VideoWidgetTests: XCTestCase {
    private var daemon: ControlledKioskd?
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("video-\(name.filter { $0.isLetter })")
    }

    override func tearDownWithError() throws {
        daemon?.stop()
        daemon = nil
    }

    /// Starts kioskd showing a scene with one video widget (`id: clip`) filling a 320x240 screen on its second page,
    /// and shows that page once subscribed to `video` events (a video opens when its page is first shown), so no
    /// event is missed.
    private func start(video: String, mode: String = "320x240@60") throws -> (ControlledKioskd, ControlEventStream) {
        let daemon = try VideoKiosk.start(in: directory, mode: mode, widgets: [
            "{id: clip, type: video, \(video), x: 0, y: 0, width: 100%, height: 100%, background: \"#3050C0\"}",
        ], header: "size: display\nbackground: black\n")
        self.daemon = daemon
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video", "scene"])
        _ = try daemon.result("page.show", #"{"name": "main"}"#)
        return (daemon, events)
    }

    private func videoEvent(_ events: ControlEventStream, _ kind: String, timeout: Double = 30) throws -> ControlEvent {
        try events.waitFor("video \(kind)", timeout: timeout) { $0.name == "video" && $0.string("kind") == kind }
    }

    func testAClipPlaysToItsEndAndIsCounted() throws {
        for codec in [TestClips.Codec.h264, .vp9] {
            let clip = try TestClips.clip(codec, width: 320, height: 240, frames: 30)
            let (daemon, events) = try start(video: "source: \(clip), loop: false, fit: fill")
            let started = try videoEvent(events, "started")
            XCTAssertEqual(started.string("source"), clip)
            XCTAssertEqual(started.string("id"), "clip")
            _ = try videoEvent(events, "ended")
            let state = try daemon.result("video.state")
            XCTAssertEqual(state["state"] as? String, "ended")
            XCTAssertEqual(state["duration"] as? Double ?? Double(state["duration"] as? Int ?? 0), 1, accuracy: 0.1)
            // An ended clip costs no frames: once the last frame's flip is in, the flip counter stands still.
            var last = try daemon.framesFlipped(), since = Date()
            try Poll.until("\(codec): flips to stop after the clip ended", timeout: 10, interval: 0.05) {
                let now = try daemon.framesFlipped()
                if now != last { (last, since) = (now, Date()) }
                return Date().timeIntervalSince(since) > 1
            }
            // Counted once the last frame's present is in (the `ended` event can come before it).
            let stats = try daemon.result("stats")
            let decoded = try XCTUnwrap(stats["video_frames_decoded"] as? Int)
            let shown = try XCTUnwrap(stats["video_frames_shown"] as? Int)
            let dropped = try XCTUnwrap(stats["video_frames_dropped"] as? Int)
            XCTAssertGreaterThan(decoded, 0)
            XCTAssertLessThanOrEqual(shown, decoded)
            // A frame skipped after the last one that came leaves no gap to count it by: allow one at the end.
            XCTAssertGreaterThanOrEqual(shown + dropped, 29, "\(codec): every frame of the one-second clip is shown or counted as dropped")
            XCTAssertGreaterThan(shown, 0)
            daemon.stop()
            self.daemon = nil
        }
    }

    /// The frame on screen after a seek while paused is the clip's frame at that time: the burned-in frame number
    /// region matches GStreamer's own decode of the same frame.
    func testTheFrameShownAtAChosenTimeMatchesTheClip() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 90)
        let (daemon, events) = try start(video: "source: \(clip), loop: false, fit: fill")
        _ = try videoEvent(events, "started")
        for frame in [45, 75, 15] {
            _ = try daemon.result("video.pause")
            _ = try daemon.result("video.seek", #"{"position": \#(Double(frame) / 30)}"#)
            let expected = try TestClips.decodedFrame(clip, frame: frame, width: 320, height: 240)
            // The number region: the time code at the top left (HH:MM:SS:FF, about 100x20 pixels at this size).
            let region = (x: 0, y: 0, width: 160, height: 72)
            var mismatch = Int.max
            try Poll.until("frame \(frame) on screen", timeout: 20, interval: 0.1) {
                let shot = try daemon.result("screenshot")
                let png = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(shot["png_base64"] as? String)))
                let file = directory.appendingPathComponent("shot.png")
                try png.write(to: file)
                let screen = try PNGFile(contentsOf: file)
                mismatch = Self.differingPixels(screen, expected, region: region)
                return mismatch <= region.width * region.height / 200
            }
            XCTAssertLessThanOrEqual(mismatch, region.width * region.height / 200, "frame \(frame): the number region differs from the clip's frame")
        }
    }

    /// Pixels of `region` whose channels differ by more than 24 (codec and scaler rounding) between the screen
    /// and the clip's frame (BGRA rows).
    static func differingPixels(_ screen: PNGFile, _ frame: [UInt8], region: (x: Int, y: Int, width: Int, height: Int)) -> Int {
        var count = 0
        for y in region.y..<region.y + region.height {
            for x in region.x..<region.x + region.width {
                let rgb = screen.rgb(x: x, y: y)
                let o = (y * screen.width + x) * 4
                let r = Int(rgb >> 16 & 0xFF), g = Int(rgb >> 8 & 0xFF), b = Int(rgb & 0xFF)
                if abs(r - Int(frame[o + 2])) > 24 || abs(g - Int(frame[o + 1])) > 24 || abs(b - Int(frame[o])) > 24 { count += 1 }
            }
        }
        return count
    }

    func testAPlaylistReportsBrokenItemsShowsThePlaceholderAndPlaysTheNext() throws {
        let good = try TestClips.clip(.vp9, width: 320, height: 240, frames: 30)
        let mp4 = try TestClips.clip(.h264, width: 320, height: 240, frames: 30)
        let truncated = try TestClips.truncated(mp4, keeping: 20_000)
        let corrupt = try TestClips.corrupt()
        let (daemon, events) = try start(video: "playlist: [\(corrupt), \(truncated), \(good)], loop: false")
        let first = try videoEvent(events, "error")
        XCTAssertEqual(first.string("source"), corrupt)
        XCTAssertFalse((first.string("message") ?? "").isEmpty, "the error carries GStreamer's message")
        let second = try videoEvent(events, "error")
        XCTAssertEqual(second.string("source"), truncated)
        let started = try videoEvent(events, "started")
        XCTAssertEqual(started.string("source"), good, "the playlist moved on to the item that plays")
        _ = try videoEvent(events, "ended")
        XCTAssertTrue(daemon.isRunning)
    }

    func testAFailingClipShowsThePlaceholderAndTheSceneRunsOn() throws {
        let corrupt = try TestClips.corrupt()
        let (daemon, events) = try start(video: "source: \(corrupt)")
        _ = try videoEvent(events, "error")
        let state = try daemon.result("video.state")
        XCTAssertEqual(state["state"] as? String, "failed")
        XCTAssertFalse((state["error"] as? String ?? "").isEmpty)
        // The placeholder is the widget's background.
        try Poll.until("the placeholder on screen", timeout: 20, interval: 0.1) {
            let shot = try daemon.result("screenshot")
            let png = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(shot["png_base64"] as? String)))
            let file = directory.appendingPathComponent("shot.png")
            try png.write(to: file)
            return try PNGFile(contentsOf: file).countPixels(in: (0, 0, 320, 240)) { $0 == 0x3050C0 } == 320 * 240
        }
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "main")
    }

    /// A file that disappears while the playlist runs fails when its turn comes again; the next item plays.
    func testAMissingFileIsReportedAndSkipped() throws {
        let good = try TestClips.clip(.h264, width: 320, height: 240, frames: 30)
        let doomed = directory.appendingPathComponent("doomed.webm").path
        try FileManager.default.copyItem(atPath: try TestClips.clip(.vp9, width: 320, height: 240, frames: 30), toPath: doomed)
        let (_, events) = try start(video: "playlist: [\(doomed), \(good)], loop: true")
        let started = try videoEvent(events, "started")
        XCTAssertEqual(started.string("source"), doomed)
        try FileManager.default.removeItem(atPath: doomed)
        _ = try videoEvent(events, "looped")
        let error = try videoEvent(events, "error")
        XCTAssertEqual(error.string("source"), doomed)
        XCTAssertTrue((error.string("message") ?? "").lowercased().contains("not found"), error.string("message") ?? "")
        let next = try videoEvent(events, "started")
        XCTAssertEqual(next.string("source"), good)
    }

    /// A `duration: video` page advances when its clip ends, and starts the clip over when it is shown again.
    func testADurationVideoPageAdvancesWhenTheClipEnds() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 30)
        let yaml = """
        pages:
          - name: film
            duration: video
            widgets:
              - {id: film, type: video, source: \(clip), loop: false, x: 0, y: 0, width: 100%, height: 100%}
          - name: after
            duration: 0.5
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#204020"}
        """
        let file = directory.appendingPathComponent("scene.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", file.path])
        self.daemon = daemon
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video", "scene"])
        _ = try videoEvent(events, "started")
        _ = try videoEvent(events, "ended")
        let shown = try events.waitFor("the next page", timeout: 10) { $0.name == "scene" && $0.string("kind") == "page_shown" }
        XCTAssertEqual(shown.string("page"), "after")
        let back = try events.waitFor("the video page again", timeout: 10) { $0.name == "scene" && $0.string("kind") == "page_shown" }
        XCTAssertEqual(back.string("page"), "film")
        _ = try videoEvent(events, "started")
        _ = try videoEvent(events, "ended")
    }
}
