import Foundation
@testable import KioskApp
import KioskControl
import KioskTestSupport
import XCTest

/// Idle dimming and blanking of a kiosk in process, on the manual clock: the backlight through a folder laid out as
/// /sys/class/backlight, `power` events, the idle state in `stats` and `output.info`, and `output.power` waking the
/// screen. The idle times pass by moving the clock, not by waiting.
final class IdlePowerTests: XCTestCase {
    private var classDirectory: URL!

    override func setUpWithError() throws {
        classDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskapp-backlight-\(UUID().uuidString)")
        let device = classDirectory.appendingPathComponent("panel_backlight")
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try Data("255\n".utf8).write(to: device.appendingPathComponent("max_brightness"))
        try Data("200\n".utf8).write(to: device.appendingPathComponent("brightness"))
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: classDirectory)
    }

    private func brightness(_ device: String = "panel_backlight") throws -> String {
        String(decoding: try Data(contentsOf: classDirectory.appendingPathComponent("\(device)/brightness")), as: UTF8.self)
    }

    private func kiosk(_ name: String, dimAfter: Double?, dimLevel: Double? = nil, blankAfter: Double? = nil,
                       backlights: String? = nil, backlight: String? = nil) throws -> KioskHarness {
        let folder = backlights ?? classDirectory.path
        return try KioskHarness(name) { run, _ in
            run.configuration.settings.idle.dimAfter = dimAfter
            run.configuration.settings.idle.dimLevel = dimLevel
            run.configuration.settings.idle.blankAfter = blankAfter
            run.configuration.backlightDirectory = folder
            run.configuration.backlight = backlight
        }
    }

    func testDimsThenBlanksAndOutputPowerWakes() throws {
        let harness = try kiosk("idle-dims", dimAfter: 1, dimLevel: 0.25, blankAfter: 2)
        let events = try harness.subscribe(["power"])
        harness.advance(by: .milliseconds(900))
        XCTAssertEqual(try harness.call("stats").result?["idle"]?["state"], "active", "not dimmed before its second")
        XCTAssertEqual(try brightness(), "200\n")
        harness.advance(by: .milliseconds(100))
        let dimmed = try events.waitFor("power") { $0["state"] as? String == "dimmed" }
        XCTAssertEqual(dimmed["previous"] as? String, "active")
        XCTAssertEqual(dimmed["reason"] as? String, "idle")
        XCTAssertEqual(try brightness(), "50\n", "a quarter of the brightness found")

        harness.advance(by: .seconds(1))
        let blanked = try events.waitFor("power") { $0["state"] as? String == "blanked" }
        XCTAssertEqual(blanked["previous"] as? String, "dimmed")
        let info = try XCTUnwrap(try harness.call("output.info").result)
        XCTAssertEqual(info["power"], "off", "blanking turns the output off")
        XCTAssertEqual(info["idle"]?["state"], "blanked")
        XCTAssertEqual(info["idle"]?["backlight"], .string(classDirectory.appendingPathComponent("panel_backlight").path))

        XCTAssertEqual(try harness.call("output.power", ["on": true]).result?["power"], "on")
        let woken = try events.waitFor("power") { $0["state"] as? String == "active" }
        XCTAssertEqual(woken["reason"] as? String, "display.power")
        XCTAssertEqual(try brightness(), "200\n", "the brightness is restored")
        let stats = try XCTUnwrap(try harness.call("stats").result)
        XCTAssertEqual(stats["idle"]?["state"], "active")
        XCTAssertEqual(stats["power"], "on")
    }

    func testTheNamedBacklightIsTheOneDimmed() throws {
        // Sorted first, so without the name it would be the one dimmed.
        let other = classDirectory.appendingPathComponent("aaa_backlight")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("10\n".utf8).write(to: other.appendingPathComponent("max_brightness"))
        try Data("10\n".utf8).write(to: other.appendingPathComponent("brightness"))
        let harness = try kiosk("idle-named", dimAfter: 1, dimLevel: 0.5, backlight: "panel_backlight")
        let events = try harness.subscribe(["power"])
        harness.advance(by: .seconds(1))
        try events.waitFor("power") { $0["state"] as? String == "dimmed" }
        XCTAssertEqual(try brightness(), "100\n")
        XCTAssertEqual(try brightness("aaa_backlight"), "10\n")
    }

    func testWithoutABacklightDimmingIsSkippedAndBlankingStillWorks() throws {
        let empty = classDirectory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let harness = try kiosk("idle-no-backlight", dimAfter: 1, blankAfter: 2, backlights: empty.path)
        let events = try harness.subscribe(["power"])
        harness.advance(by: .seconds(2))
        try events.waitFor("power") { $0["state"] as? String == "blanked" }
        XCTAssertEqual(try harness.call("output.info").result?["power"], "off")
        XCTAssertEqual(harness.log.lines.filter { $0.contains("no backlight in \(empty.path): idle dimming skipped") }.count, 1,
                       "\(harness.log.lines)")
    }
}
