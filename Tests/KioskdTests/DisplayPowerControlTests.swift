import Foundation
import KioskTestSupport
import XCTest

/// `display.power` on the headless backend: no flips while off; on again redraws the whole screen.
final class DisplayPowerControlTests: XCTestCase {
    func testPowerOffStopsFlipsAndOnRedraws() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60"])
        defer { daemon.stop() }
        let events = try ControlEventStream(daemon, events: ["flip", "frame"])
        XCTAssertEqual(try daemon.result("display.power", #"{"on": false}"#)["power"] as? String, "off")
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "off")
        try events.discardEarlierEvents()
        // At most the flip in flight completes; then none for half a second (the dashboard's ticker would flip
        // every frame if the display were on).
        let flipped = try events.waitForQuiet("'flip' events", quiet: 0.5, timeout: 10) { $0.name == "flip" }
        XCTAssertLessThanOrEqual(flipped.count, 1, "no flips while off: \(flipped)")
        let offAt = try events.stats()["frames_flipped"] as? Int ?? -1
        XCTAssertEqual(try daemon.result("display.power", #"{"on": true}"#)["power"] as? String, "on")
        try events.waitFor("a 'frame' after power on", timeout: 10) { $0.name == "frame" }
        try events.waitFor("a 'flip' after power on", timeout: 10) { $0.name == "flip" }
        XCTAssertGreaterThan(try daemon.framesFlipped(), offAt)
        let r = try daemon.kioskctl(["power", "off"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "display power: off\n", r.stderr)
        XCTAssertEqual(try daemon.kioskctl(["power", "on"]).status, 0)
    }
}
