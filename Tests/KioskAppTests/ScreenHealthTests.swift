import Foundation
@testable import KioskApp
import KioskControl
import KioskScene
import KioskTestSupport
import XCTest

/// The health settings reach the engine of a kiosk in process, on the manual clock: a scene whose widgets draw black
/// on black turns the screen `black` after `black_after`, an `error` event (`screen_black`) says so, and with
/// `restart_on: [black]` the health signal (the watchdog's) is unhealthy.
final class ScreenHealthTests: XCTestCase {
    /// Moves the clock a frame at a time until `stats` satisfies `condition`.
    private func frames(_ harness: KioskHarness, until what: String, _ condition: (JSONValue) -> Bool) throws {
        try harness.waitUntil(what) {
            harness.advance(by: .milliseconds(17))
            return condition(try XCTUnwrap(try harness.call("stats").result))
        }
    }

    private func healthReason(_ stats: JSONValue) -> String {
        guard case .string(let reason) = stats["health_reason"] else { return "" }
        return reason
    }

    func testBlackWidgetsOnBlackAreABlackScreenThatRestartOnMakesUnhealthy() throws {
        let harness = try KioskHarness("health-black", scene: """
            size: display
            background: "#000000"
            widgets:
              - {id: title, type: text, text: "Pump station 3", x: 10, y: 10, width: 200, height: 40, foreground: "#000000"}

            """) { run, _ in
            run.configuration.settings.health.restartOn = [.black]
            run.configuration.settings.health.blackAfter = 0.5
        }
        try frames(harness, until: "health_reason 'black: ...'") { healthReason($0).hasPrefix("black: ") }
        let stats = try XCTUnwrap(try harness.call("stats").result)
        XCTAssertEqual(stats["healthy"], false, "restart_on lists black")
        guard case .string(let fingerprint) = stats["fingerprint"] else { return XCTFail("no fingerprint: \(stats)") }
        XCTAssertEqual(fingerprint.count, 16)

        // Text that shows clears it; black again, and the event comes again (subscribed now, whatever the start).
        let events = try harness.subscribe(["error"])
        XCTAssertNil(try harness.call("widget.set", ["id": "title", "props": ["foreground": "#ffffff"]]).error)
        try frames(harness, until: "health_reason 'ok'") { healthReason($0) == "ok" }
        XCTAssertEqual(try harness.call("stats").result?["healthy"], true)
        XCTAssertNil(try harness.call("widget.set", ["id": "title", "props": ["foreground": "#000000"]]).error)
        try frames(harness, until: "healthy false") { $0["healthy"] == false }
        let event = try events.waitFor("error") { $0["code"] as? String == "screen_black" }
        XCTAssertTrue((event["message"] as? String)?.hasPrefix("black: the screen has been black") == true, "\(event)")
    }
}
