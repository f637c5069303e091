import Foundation
import KioskTestSupport
import XCTest

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
