import Foundation
import KioskTestSupport
import XCTest

/// The `video` widget end to end on a headless `kioskd run`, with clips GStreamer makes at test time: events,
/// counters, the frame on screen at a chosen time against GStreamer's own decode of it, broken and missing files
/// in a playlist, and the video commands.
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
        let yaml = """
        size: display
        background: black
        pages:
          - name: waiting
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#101010"}
          - name: main
            widgets:
              - {id: clip, type: video, \(video), x: 0, y: 0, width: 100%, height: 100%, background: "#3050C0"}
        """
        let file = directory.appendingPathComponent("scene.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", mode, "--scene", file.path])
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
            try waitByPolling(for: "\(codec): flips to stop after the clip ended", timeout: 10, interval: 0.05) {
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
            try waitByPolling(for: "frame \(frame) on screen", timeout: 20, interval: 0.1) {
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
        try waitByPolling(for: "the placeholder on screen", timeout: 20, interval: 0.1) {
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

    func testVideoCommands() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 90)
        let other = try TestClips.clip(.vp9, width: 320, height: 240, frames: 30)
        let (daemon, events) = try start(video: "source: \(clip), loop: true")
        _ = try videoEvent(events, "started")
        let paused = try daemon.result("video.pause", #"{"id": "clip"}"#)
        XCTAssertEqual(paused["state"] as? String, "paused")
        let seeked = try daemon.result("video.seek", #"{"position": 2.5}"#)
        XCTAssertEqual(seeked["source"] as? String, clip)
        try waitByPolling(for: "the position after the seek", timeout: 20, interval: 0.05) {
            let position = try daemon.result("video.state")["position"] as? Double ?? 0
            return abs(position - 2.5) < 0.05
        }
        XCTAssertEqual(try daemon.result("video.play")["state"] as? String, "playing")
        _ = try videoEvent(events, "looped", timeout: 10)

        let loaded = try daemon.result("video.load", #"{"source": "\#(other)"}"#)
        XCTAssertEqual(loaded["source"] as? String, other)
        let started = try videoEvent(events, "started")
        XCTAssertEqual(started.string("source"), other)

        let ctl = try daemon.kioskctl(["video", "pause", "--id", "clip"])
        XCTAssertEqual(ctl.status, 0, ctl.stderr)
        XCTAssertTrue(String(decoding: ctl.stdout, as: UTF8.self).contains("state: paused"), String(decoding: ctl.stdout, as: UTF8.self))
        let missing = try daemon.kioskctl(["video", "state", "--id", "nope"])
        XCTAssertEqual(missing.status, 1, "an error reply")
        XCTAssertTrue(missing.stderr.contains("no video widget with id 'nope'"), missing.stderr)

        XCTAssertEqual(try daemon.error("video.state", #"{"id": "nope"}"#).code, "not_found")
        XCTAssertEqual(try daemon.error("video.seek", #"{"position": -1}"#).code, "invalid_argument")
        XCTAssertEqual(try daemon.error("video.load", #"{"source": "relative.mp4"}"#).code, "invalid_argument")
        XCTAssertEqual(try daemon.error("video.load", #"{"source": "/nonexistent/clip.mp4"}"#).code, "invalid_argument")
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

/// 1080p30 H.264 through the daemon beside a seconds clock: every frame of the clip is shown or counted as dropped,
/// the video moves, and the clock keeps updating, in ten seconds (under ThreadSanitizer too). The 60-second,
/// zero-drop target is `VideoMinuteTests`.
final class VideoFullHDTests: XCTestCase {
    func testTenSecondsOf1080p30KeepUpAndOtherWidgetsUpdate() throws {
        let clip = try TestClips.clip(.h264, width: 1920, height: 1080, frames: 300)
        let daemon = try FullHDVideoKiosk.start(clip: clip, scratch: "video-1080p")
        defer { daemon.stop() }
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video"])
        _ = try daemon.result("page.show", #"{"name": "main"}"#)
        _ = try events.waitFor("video started", timeout: 30) { $0.string("kind") == "started" }
        let clockBefore = try daemon.result("widget.get", #"{"id": "clock"}"#)["shown_text"] as? String
        _ = try events.waitFor("video ended", timeout: 60) { $0.string("kind") == "ended" }
        let clockAfter = try daemon.result("widget.get", #"{"id": "clock"}"#)["shown_text"] as? String
        XCTAssertNotEqual(clockBefore, clockAfter, "the clock kept ticking while the video played")
        let stats = try daemon.result("stats")
        let decoded = try XCTUnwrap(stats["video_frames_decoded"] as? Int)
        let shown = try XCTUnwrap(stats["video_frames_shown"] as? Int)
        let dropped = try XCTUnwrap(stats["video_frames_dropped"] as? Int)
        XCTAssertLessThanOrEqual(shown, decoded)
        XCTAssertGreaterThanOrEqual(shown + dropped, 299, "every frame of the ten-second clip is shown or counted as dropped")
        // Whether software H.264 decoding of 1080p keeps up depends on the machine and its load (on a test host
        // shared with other builds it does not): the drop count is measured here, not bounded; the bench reports it.
        XCTAssertGreaterThanOrEqual(shown, 30, "the video moved on screen (shown \(shown), dropped \(dropped))")
    }
}

/// `kioskd bench --scenario video` with a small clip: every contestant's figures measured, the plane row on a
/// headless output with an overlay plane, where the engine puts the video layer on the plane.
final class VideoBenchTests: XCTestCase {
    func testVideoScenarioMeasuresThePlaneAndCompositedPathsAndANaiveCopy() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 90)
        let r = try KioskdProcess.run(["bench", "--scenario", "video", "--frames", "60", "--clip", clip, "--json"], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let video = try XCTUnwrap((report["scenarios"] as? [String: Any])?["video"] as? [String: Any], r.stdout)
        XCTAssertEqual(video["clip"] as? String, clip)
        for name in ["composited", "plane", "naive_copy"] {
            let f = try XCTUnwrap(video[name] as? [String: Any], name)
            XCTAssertGreaterThan(f["main_cpu_ms_per_shown_frame"] as? Double ?? 0, 0, name)
            XCTAssertGreaterThan(f["total_cpu_ms_per_shown_frame"] as? Double ?? 0, 0, name)
            XCTAssertGreaterThan(f["frames_decoded"] as? Int ?? 0, 0, name)
            let shown = try XCTUnwrap(f["frames_shown"] as? Int, name), dropped = try XCTUnwrap(f["frames_dropped"] as? Int, name)
            XCTAssertGreaterThan(shown, 0, name)
            XCTAssertGreaterThanOrEqual(shown + dropped, 60, name)
            XCTAssertNotNil(f["main_ms_p99"] as? Double, name)
        }
        for name in ["composited", "plane"] {
            let f = try XCTUnwrap(video[name] as? [String: Any])
            XCTAssertGreaterThan(f["other_widget_updates"] as? Int ?? 0, 5, "\(name): the other widget kept updating during two seconds of video")
        }
        let composited = try XCTUnwrap(video["composited"] as? [String: Any])
        XCTAssertEqual(composited["layer_path"] as? String, "composited")
        XCTAssertEqual(composited["layer_path_reason"] as? String, "no overlay planes")
        XCTAssertTrue(composited["plane_frames_copied"] is NSNull, "no plane, no plane copies")
        let plane = try XCTUnwrap(video["plane"] as? [String: Any])
        XCTAssertEqual(plane["layer_path"] as? String, "plane", "the engine took the plane path for the video layer: \(plane)")
        XCTAssertTrue(plane["layer_path_reason"] is NSNull)
        // Each frame a present carried was copied into the plane's buffers (and the first, the layer's backdrop).
        let copied = try XCTUnwrap(plane["plane_frames_copied"] as? Int)
        let shown = try XCTUnwrap(plane["frames_shown"] as? Int)
        XCTAssertGreaterThanOrEqual(copied, shown, "every shown frame went through the plane's buffers")
        XCTAssertLessThanOrEqual(copied, shown + 2)
        let text = try KioskdProcess.run(["bench", "--scenario", "video", "--frames", "30", "--clip", clip], timeout: 300)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("plane run plane;"), text.stdout)
    }
}

/// A headless 1920x1080 kioskd whose scene waits on a plain page until the test shows `main`: the clip full screen,
/// a seconds clock, and any `extraWidgets` (scene YAML lines) beside them.
enum FullHDVideoKiosk {
    static func start(clip: String, scratch: String, extraWidgets: [String] = []) throws -> ControlledKioskd {
        let directory = try KioskdProcess.scratchDirectory(scratch)
        let widgets = ["{id: clip, type: video, source: \(clip), loop: false, fit: fill, x: 0, y: 0, width: 100%, height: 100%}",
                       "{id: clock, type: clock, format: \"%H:%M:%S\", x: 40, y: 900, width: 600, height: 120, foreground: white, font: {size: 80}}"]
            + extraWidgets
        let yaml = """
        pages:
          - name: waiting
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#101010"}
          - name: main
            widgets:
        \(widgets.map { "      - " + $0 }.joined(separator: "\n"))
        """
        let file = directory.appendingPathComponent("scene.yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        return try ControlledKioskd(["run", "--backend", "headless", "--mode", "1920x1080@60", "--scene", file.path])
    }
}
