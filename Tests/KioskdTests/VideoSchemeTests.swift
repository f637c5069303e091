import Foundation
import KioskTestSupport
import XCTest

/// `video.allowed_schemes` and the retry of network video, end to end on a headless `kioskd run` with GStreamer: a
/// stream whose server is not up yet fails, and plays by itself once a real HTTP server serves it; schemes outside
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
    private func start(source: String, extraArguments: [String] = []) throws -> (ControlledKioskd, ControlEventStream) {
        let daemon = try VideoKiosk.start(in: directory, mode: "320x240@60", widgets: [
            "{id: clip, type: video, source: \"\(source)\", loop: true, x: 0, y: 0, width: 100%, height: 100%, background: \"#3050C0\"}",
        ], extraArguments: extraArguments)
        self.daemon = daemon
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video"])
        _ = try daemon.result("page.show", #"{"name": "main"}"#)
        return (daemon, events)
    }

    private func videoEvent(_ events: ControlEventStream, _ kind: String, timeout: Double = 30) throws -> ControlEvent {
        try events.waitFor("video \(kind)", timeout: timeout) { $0.name == "video" && $0.string("kind") == kind }
    }

    func testAStreamThatFailedBeforeItsServerWasUpPlaysOnceItIs() throws {
        let served = directory.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try TestClips.clip(.vp9, width: 320, height: 240, frames: 60),
                                         toPath: served.appendingPathComponent("clip.webm").path)
        let server = try LocalHTTPServer(directory: served.path)
        self.server = server
        let url = server.url("clip.webm")
        let (daemon, events) = try start(source: url)

        // Nothing listens yet: the stream fails, and a try is scheduled.
        let failed = try videoEvent(events, "error")
        XCTAssertEqual(failed.string("source"), url)
        XCTAssertFalse((failed.string("message") ?? "").isEmpty, "the error carries GStreamer's message")
        var pending: [String: Any] = [:]
        try Poll.until("a retry to be pending", timeout: 10, interval: 0.02) {
            pending = try daemon.result("video.state")
            return pending["retry_in"] is Double || pending["retry_in"] is Int
        }
        XCTAssertEqual(pending["state"] as? String, "failed")
        XCTAssertLessThanOrEqual((pending["retry_in"] as? Double) ?? Double(pending["retry_in"] as? Int ?? 0), 60)

        // The server comes up: the widget plays the stream by itself, within the backoff's reach.
        try server.start()
        let started = try videoEvent(events, "started", timeout: 90)
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
