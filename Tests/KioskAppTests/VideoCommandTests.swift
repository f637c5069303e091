import Foundation
@testable import KioskApp
import KioskTestSupport
import XCTest

/// The `video.*` control commands on a kiosk in process (the real loop, GStreamer playing clips it made at test
/// time), as a client on the socket and kioskctl send them: pause, seek, play, load and state, and their errors.
/// `KioskdTests.VideoWidgetTests` keeps the widget's playback end to end in kioskd.
final class VideoCommandTests: XCTestCase {
    func testVideoCommands() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 90)
        let other = try TestClips.clip(.vp9, width: 320, height: 240, frames: 30)
        // `main` is shown once the client listens (`VideoTestScene`), so no event is missed.
        let harness = try KioskHarness("video-commands", scene: VideoTestScene.yaml(widgets: [
            "{id: clip, type: video, source: \(clip), loop: true, x: 0, y: 0, width: 100%, height: 100%, background: \"#3050C0\"}",
        ], header: "size: display\nbackground: black\n"), manualClock: false)
        let events = try harness.subscribe(["video", "scene"])
        func result(_ command: String, _ arguments: String = "{}") throws -> [String: Any] {
            let reply = try events.request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
            return try XCTUnwrap(reply["result"] as? [String: Any], "\(command): \(reply)")
        }
        func errorCode(_ command: String, _ arguments: String) throws -> String? {
            let reply = try events.request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
            return (reply["error"] as? [String: Any])?["code"] as? String
        }
        func videoEvent(_ kind: String, timeout: Double = 30) throws -> [String: Any] {
            try events.waitFor("video", timeout: timeout) { $0["kind"] as? String == kind }
        }
        _ = try result("page.show", #"{"name": "main"}"#)
        _ = try videoEvent("started")
        let paused = try result("video.pause", #"{"id": "clip"}"#)
        XCTAssertEqual(paused["state"] as? String, "paused")
        let seeked = try result("video.seek", #"{"position": 2.5}"#)
        XCTAssertEqual(seeked["source"] as? String, clip)
        try harness.waitUntil("the position after the seek", timeout: 20) {
            let position = try result("video.state")["position"] as? Double ?? 0
            return abs(position - 2.5) < 0.05
        }
        XCTAssertEqual(try result("video.play")["state"] as? String, "playing")
        _ = try videoEvent("looped", timeout: 10)

        let loaded = try result("video.load", #"{"source": "\#(other)"}"#)
        XCTAssertEqual(loaded["source"] as? String, other)
        let started = try videoEvent("started")
        XCTAssertEqual(started["source"] as? String, other)

        let socket = harness.socketPath
        let ctl = try harness.meanwhile("kioskctl video pause") {
            try KioskdProcess.kioskctl(["video", "pause", "--id", "clip"], socket: socket)
        }
        XCTAssertEqual(ctl.status, 0, ctl.stderr)
        XCTAssertTrue(String(decoding: ctl.stdout, as: UTF8.self).contains("state: paused"), String(decoding: ctl.stdout, as: UTF8.self))
        let missing = try harness.meanwhile("kioskctl video state") {
            try KioskdProcess.kioskctl(["video", "state", "--id", "nope"], socket: socket)
        }
        XCTAssertEqual(missing.status, 1, "an error reply")
        XCTAssertTrue(missing.stderr.contains("no video widget with id 'nope'"), missing.stderr)

        XCTAssertEqual(try errorCode("video.state", #"{"id": "nope"}"#), "not_found")
        XCTAssertEqual(try errorCode("video.seek", #"{"position": -1}"#), "invalid_argument")
        XCTAssertEqual(try errorCode("video.load", #"{"source": "relative.mp4"}"#), "invalid_argument")
        XCTAssertEqual(try errorCode("video.load", #"{"source": "/nonexistent/clip.mp4"}"#), "invalid_argument")
    }
}
