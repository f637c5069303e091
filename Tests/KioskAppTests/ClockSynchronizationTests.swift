import Foundation
@testable import KioskApp
import KioskControl
import KioskTestSupport
import XCTest

/// A kiosk whose clock is not synchronized shows the scene's fallback and says so in `stats`; once the clock is
/// synchronized (here: the flag file appears, as systemd-timesyncd makes it) the schedule applies at the next poll
/// (a second on the manual clock), and `stats` says `clock_synchronized: true`. In process, the poll's second
/// passing by moving the clock.
final class ClockSynchronizationTests: XCTestCase {
    /// The flag file the harness's kiosk is given (`clockSynchronizedFile`), absent until the test makes it.
    private func synchronize(_ harness: KioskHarness) throws {
        try Data().write(to: harness.directory.appendingPathComponent("synchronized"))
    }

    func testFallbackUntilSynchronizedThenTheSchedule() throws {
        let harness = try KioskHarness("clock-sync", scene: """
            timezone: UTC
            fallback: closed
            pages:
              - {name: open, when: {days: [mon, tue, wed, thu, fri, sat, sun]}, widgets: [{type: rect, background: "#00ff00"}]}
              - {name: closed, widgets: [{type: rect, background: "#000000"}]}

            """)
        XCTAssertEqual(try harness.call("stats").result?["clock_synchronized"], false)
        XCTAssertEqual(try harness.call("scene.get").result?["current_page"], "closed", "a clock that may be wrong shows the fallback")
        harness.advance(by: .seconds(2))
        XCTAssertEqual(try harness.call("scene.get").result?["current_page"], "closed", "still the fallback while unsynchronized")

        try synchronize(harness)
        harness.advance(by: .seconds(1))
        try harness.waitUntil("the schedule to apply once the clock is synchronized") {
            try harness.call("scene.get").result?["current_page"] == "open"
        }
        XCTAssertEqual(try harness.call("stats").result?["clock_synchronized"], true)
        XCTAssertEqual(harness.log.lines.filter { $0.contains("clock: synchronized") }.count, 1, "\(harness.log.lines)")
    }

    /// Playlist items' rules alone (no page has any) make the clock's state matter: until it is synchronized a video
    /// whose every item has rules waits on its placeholder and says why; once it is, the item is opened at once
    /// (here a file GStreamer cannot play: it is the opening that counts).
    func testPlaylistItemsWithRulesWaitUntilSynchronized() throws {
        let clip = try KioskdProcess.scratchDirectory("clock-sync-clip").appendingPathComponent("clip.mp4")
        try Data("not really a video".utf8).write(to: clip)
        let harness = try KioskHarness("clock-sync-items", scene: """
            timezone: UTC
            widgets:
              - {id: v, type: video, playlist: [{source: \(clip.path), when: {days: [mon, tue, wed, thu, fri, sat, sun]}}]}

            """)
        let waiting = try XCTUnwrap(try harness.call("video.state").result)
        XCTAssertEqual(waiting["state"], "waiting")
        guard case .string(let why) = waiting["waiting"] else { return XCTFail("no reason to wait: \(waiting)") }
        XCTAssertTrue(why.hasPrefix("the clock is not synchronized"), why)

        try synchronize(harness)
        harness.advance(by: .seconds(1))
        try harness.waitUntil("the item to be opened once the clock is synchronized") {
            try harness.call("video.state").result?["state"] != "waiting"
        }
        XCTAssertEqual(try harness.call("video.state").result?["waiting"], .null)
    }
}
