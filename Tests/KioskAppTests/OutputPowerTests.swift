import Foundation
@testable import KioskApp
import KioskControl
import KioskTestSupport
import XCTest

/// `output.power` on the headless backend, in process on the manual clock: no flips while off, however the scene
/// changes; on again, a frame is rendered and flipped.
final class OutputPowerTests: XCTestCase {
    /// Moves the clock a frame at a time (the flips of a 60 Hz output complete), turning the loop and the render pool
    /// after each, until `condition` holds.
    private func frames(_ harness: KioskHarness, until what: String, _ condition: () throws -> Bool) throws {
        try harness.waitUntil(what) {
            harness.advance(by: .milliseconds(17))
            return try condition()
        }
    }

    /// `count` frames of the clock, each followed by turns of the loop and the render pool.
    private func frames(_ harness: KioskHarness, _ count: Int) throws {
        var done = 0
        try frames(harness, until: "\(count) frames of the clock") {
            done += 1
            return done > count
        }
    }

    private func flipped(_ harness: KioskHarness) throws -> Int {
        guard case .int(let count) = try harness.call("stats").result?["frames_flipped"] else {
            throw ControlTestError("stats without frames_flipped")
        }
        return Int(count)
    }

    func testPowerOffStopsFlipsAndOnRedraws() throws {
        let harness = try KioskHarness("output-power")
        try frames(harness, until: "the first flip") { try flipped(harness) > 0 }
        XCTAssertEqual(try harness.call("output.power", ["on": false]).result?["power"], "off")
        XCTAssertEqual(try harness.call("output.info").result?["power"], "off")
        let events = try harness.subscribe(["flip", "frame"])
        let offAt = try flipped(harness)

        // The scene changes, and half a second passes: an output that is on would render and flip it.
        XCTAssertNil(try harness.call("data.set", ["values": ["greeting": "while off"]]).error)
        try frames(harness, 30)
        XCTAssertLessThanOrEqual(try flipped(harness) - offAt, 1, "at most the flip in flight completes while off")
        let whileOff = try flipped(harness)
        try frames(harness, 30)
        XCTAssertEqual(try flipped(harness), whileOff, "no flips while off")

        XCTAssertEqual(try harness.call("output.power", ["on": true]).result?["power"], "on")
        try frames(harness, until: "a flip after power on") { try flipped(harness) > whileOff }
        try events.waitFor("frame")
        try events.waitFor("flip")
    }
}
