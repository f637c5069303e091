import Foundation
import KioskTestSupport
import XCTest

/// `video.allowed_schemes` and clips by URL, end to end on a headless `kioskd run` with GStreamer: a clip by URL
/// whose server is not up yet waits for its download, and plays by itself once a real HTTP server serves it; schemes outside
/// the list are refused by `video.load` with the scheme and the list named, while the loop answers; and the list
/// a config file gives holds for `kioskd check` and for `video.load`.
final class VideoSchemeTests: XCTestCase {
    private var daemon: ControlledKioskd?
    private var server: LocalHTTPServer?
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("video-schemes-\(name.filter { $0.isLetter })")
    }

    override func tearDownWithError() throws {
        daemon?.stop()
        daemon = nil
        server?.stop()
        server = nil
    }

    /// kioskd showing one video widget (`id: clip`) on a 320x240 screen, on its second page, shown once subscribed
    /// to `video` events so none is missed.
    private func start(source: String, extraKeys: String = "", extraArguments: [String] = []) throws -> (ControlledKioskd, ControlEventStream) {
        let daemon = try VideoKiosk.start(in: directory, mode: "320x240@60", widgets: [
            "{id: clip, type: video, source: \"\(source)\", loop: true, x: 0, y: 0, width: 100%, height: 100%, background: \"#3050C0\"\(extraKeys)}",
        ], extraArguments: extraArguments, environment: ["CACHE_DIRECTORY": directory.appendingPathComponent("cache").path])
        self.daemon = daemon
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video", "error"])
        _ = try daemon.result("page.show", #"{"name": "main"}"#)
        return (daemon, events)
    }

    private func videoEvent(_ events: ControlEventStream, _ kind: String, timeout: Double = 30) throws -> ControlEvent {
        try events.waitFor("video \(kind)", timeout: timeout) { $0.name == "video" && $0.string("kind") == kind }
    }

    func testAClipByURLWhoseServerWasNotUpPlaysOnceItIs() throws {
        let served = directory.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try TestClips.clip(.vp9, width: 320, height: 240, frames: 60),
                                         toPath: served.appendingPathComponent("clip.webm").path)
        let server = try LocalHTTPServer(directory: served.path)
        self.server = server
        let url = server.url("clip.webm")
        let (daemon, events) = try start(source: url, extraKeys: ", refresh: 5")

        // Nothing listens yet: the fetch fails and is reported, and the widget waits for the download (its
        // placeholder, no video error).
        let failed = try events.waitFor("the failed fetch", timeout: 30) { $0.name == "error" && $0.string("code") == "remote_asset" }
        XCTAssertTrue((failed.string("message") ?? "").hasPrefix("video \(url): "), "\(failed)")
        var pending: [String: Any] = [:]
        try Poll.until("the widget waiting for the download", timeout: 10, interval: 0.02) {
            pending = try daemon.result("video.state")
            return pending["state"] as? String == "waiting"
        }
        XCTAssertEqual(pending["waiting"] as? String, "waiting for the download of \(url)")
        XCTAssertTrue(pending["error"] is NSNull, "\(pending)")

        // The server comes up: the clip is downloaded and plays by itself, within the fetch backoff's reach
        // (2 s doubling, at most `refresh`).
        try server.start()
        let started = try videoEvent(events, "started", timeout: 60)
        XCTAssertEqual(started.string("source"), url)
        try Poll.until("frames of the stream on screen", timeout: 30, interval: 0.05) {
            (try daemon.result("video.state")["frames_shown"] as? Int ?? 0) > 0
        }
        let state = try daemon.result("video.state")
        XCTAssertTrue(state["error"] is NSNull, "\(state)")
        XCTAssertTrue(state["retry_in"] is NSNull, "\(state)")
        XCTAssertTrue(server.requestLog.contains("GET /clip.webm"), server.requestLog)
        XCTAssertEqual(try daemon.result("ping")["pong"] as? Bool, true)
    }

    func testSchemesOutsideTheListAreRefusedByNameAndTheLoopAnswers() throws {
        let clip = try TestClips.clip(.vp9, width: 320, height: 240, frames: 30)
        let (daemon, events) = try start(source: clip)
        _ = try videoEvent(events, "started")
        let refused = [("rtsp://127.0.0.1:8554/stream", "rtsp"), ("ftp://127.0.0.1/clip.webm", "ftp"),
                       ("data:video/webm;base64,GkXfo59ChoEBQveBAULygQRC84EIQoKEd2VibQ==", "data"),
                       ("v4l2:///dev/video0", "v4l2"), ("RTSP://127.0.0.1/Stream", "rtsp")]
        for (source, scheme) in refused {
            let error = try daemon.error("video.load", #"{"id": "clip", "source": "\#(source)"}"#)
            XCTAssertEqual(error.code, "invalid_argument", source)
            XCTAssertEqual(error.message, "video.load: scheme '\(scheme)' is not allowed (video.allowed_schemes: file, https, http)")
            XCTAssertEqual(try daemon.result("ping")["pong"] as? Bool, true, "the loop answers after \(source)")
        }
        let state = try daemon.result("video.state")
        XCTAssertEqual(state["source"] as? String, clip, "the widget kept its clip")
        XCTAssertEqual(state["playlist"] as? [String], [clip])

        // A file URI is a file, in any case of the scheme.
        let loaded = try daemon.result("video.load", #"{"source": "FILE://\#(clip)"}"#)
        XCTAssertEqual(loaded["source"] as? String, "FILE://\(clip)")
        XCTAssertTrue(daemon.isRunning)
    }

    /// The config file's list: `kioskd check --config` names a scene's stream it does not allow, and the running
    /// kiosk refuses it through `video.load`.
    func testTheConfiguredListHoldsForCheckAndLoad() throws {
        let config = directory.appendingPathComponent("kioskd.yaml")
        try "video:\n  allowed_schemes: [file]\n".write(to: config, atomically: true, encoding: .utf8)
        let scene = directory.appendingPathComponent("stream.yaml")
        try "widgets:\n  - {id: v, type: video, source: \"https://cdn.example/a.webm\"}\n".write(to: scene, atomically: true, encoding: .utf8)
        let check = try KioskdProcess.run(["check", "--config", config.path, scene.path], timeout: 60)
        XCTAssertEqual(check.status, 1, check.stdout)
        XCTAssertEqual(check.errorLines, ["\(scene.path):2:34: widgets[0].source: video 'https://cdn.example/a.webm': "
                                          + "scheme 'https' is not allowed (video.allowed_schemes: file)"])
        let allowed = try KioskdProcess.run(["check", scene.path], timeout: 60)
        XCTAssertEqual(allowed.status, 0, "the default list allows https: \(allowed.stderr)")

        let clip = try TestClips.clip(.vp9, width: 320, height: 240, frames: 30)
        let (daemon, events) = try start(source: clip, extraArguments: ["--config", config.path])
        _ = try videoEvent(events, "started")
        let error = try daemon.error("video.load", #"{"source": "http://127.0.0.1:9/clip.webm"}"#)
        XCTAssertEqual(error.code, "invalid_argument")
        XCTAssertEqual(error.message, "video.load: scheme 'http' is not allowed (video.allowed_schemes: file)")
        XCTAssertEqual(try daemon.result("ping")["pong"] as? Bool, true)
    }

    /// `video.load` from a fleet goes through the same command, and the same list: refused with the same words, and
    /// the kiosk answers the next command.
    func testVideoLoadOverMQTTIsHeldToTheSameList() throws {
        let broker = try MosquittoBroker()
        let prefix = "kioskd/schemes"
        let config = broker.directory + "/kioskd.yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nallow: [ping, video.load]\n", to: config)
        let clip = try TestClips.clip(.vp9, width: 320, height: 240, frames: 30)
        let replies = try broker.subscribe(["\(prefix)/reply"])
        let status = try broker.subscribe(["\(prefix)/status"])
        let (daemon, events) = try start(source: clip, extraArguments: ["--config", config])
        _ = try videoEvent(events, "started")
        _ = try status.waitFor(on: "\(prefix)/status") { $0 == "online" }
        try broker.publish("\(prefix)/cmd", #"{"id": 7, "cmd": "video.load", "args": {"source": "v4l2:///dev/video0"}}"#)
        let reply = try replies.waitForJSON(on: "\(prefix)/reply")[0]
        XCTAssertEqual(reply["ok"] as? Bool, false, "\(reply)")
        let error = try XCTUnwrap(reply["error"] as? [String: Any], "\(reply)")
        XCTAssertEqual(error["code"] as? String, "invalid_argument")
        XCTAssertEqual(error["message"] as? String, "video.load: scheme 'v4l2' is not allowed (video.allowed_schemes: file, https, http)")
        try broker.publish("\(prefix)/cmd", #"{"id": 8, "cmd": "ping"}"#)
        XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["ok"] as? Bool, true)
        XCTAssertEqual(try daemon.result("video.state")["source"] as? String, clip)
        daemon.stop()
        self.daemon = nil
    }
}
