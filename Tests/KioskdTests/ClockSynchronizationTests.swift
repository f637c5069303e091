import Foundation
import KioskTestSupport
import XCTest

/// A kiosk whose clock is not synchronized shows the scene's fallback and says so in `stats`; once the clock is
/// synchronized (here: the flag file appears, as systemd-timesyncd makes it) the schedule applies within the
/// poll, and `stats` says `clock_synchronized: true`.
final class ClockSynchronizationTests: XCTestCase {
    func testFallbackUntilSynchronizedThenTheSchedule() throws {
        let dir = try KioskdProcess.scratchDirectory("clock-sync")
        let scene = dir.appendingPathComponent("scene.yaml")
        try Data("""
            timezone: UTC
            fallback: closed
            pages:
              - {name: open, when: {days: [mon, tue, wed, thu, fri, sat, sun]}, widgets: [{type: rect, background: "#00ff00"}]}
              - {name: closed, widgets: [{type: rect, background: "#000000"}]}
            """.utf8).write(to: scene)
        let flag = dir.appendingPathComponent("synchronized")
        try? FileManager.default.removeItem(at: flag)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path,
                                           "--clock-synchronized-file", flag.path])
        XCTAssertEqual(try daemon.result("stats")["clock_synchronized"] as? Bool, false)
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "closed", "a clock that may be wrong shows the fallback")

        try Data().write(to: flag)
        try Poll.until("the schedule to apply once the clock is synchronized", timeout: 10) {
            (try? daemon.result("scene.get")["current_page"] as? String) == "open"
        }
        XCTAssertEqual(try daemon.result("stats")["clock_synchronized"] as? Bool, true)
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("clock: synchronized"), result.stderr)
    }
    /// Playlist items' rules alone (no page has any) make the clock's state matter: until it is synchronized a video
    /// whose every item has rules waits on its placeholder and says why; once it is, the item is opened at once
    /// (here a file GStreamer cannot play: it is the opening that counts).
    func testPlaylistItemsWithRulesWaitUntilSynchronized() throws {
        let dir = try KioskdProcess.scratchDirectory("clock-sync-items")
        try Data("not really a video".utf8).write(to: dir.appendingPathComponent("clip.mp4"))
        let scene = dir.appendingPathComponent("scene.yaml")
        try Data("""
            timezone: UTC
            widgets:
              - {id: v, type: video, playlist: [{source: clip.mp4, when: {days: [mon, tue, wed, thu, fri, sat, sun]}}]}
            """.utf8).write(to: scene)
        let flag = dir.appendingPathComponent("synchronized")
        try? FileManager.default.removeItem(at: flag)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path,
                                           "--clock-synchronized-file", flag.path])
        let waiting = try daemon.result("video.state")
        XCTAssertEqual(waiting["state"] as? String, "waiting")
        XCTAssertTrue((waiting["waiting"] as? String)?.hasPrefix("the clock is not synchronized") == true, "\(waiting)")

        try Data().write(to: flag)
        try Poll.until("the item to be opened once the clock is synchronized", timeout: 10) {
            (try? daemon.result("video.state")["state"] as? String).map { $0 != "waiting" } ?? false
        }
        XCTAssertTrue(try daemon.result("video.state")["waiting"] is NSNull)
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }
}
