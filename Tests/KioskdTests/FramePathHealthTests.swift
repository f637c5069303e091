import Foundation
import KioskTestSupport
import XCTest

/// The health signal and the display handover of a running kioskd, over its control socket, on the headless
/// backend (the same wiring as on DRM, without a master to drop).
final class FramePathHealthTests: XCTestCase {
    func testStatsReportHealthAndSIGUSR1HandsTheDisplayOverUntilSIGUSR2() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60"])
        defer { _ = daemon.stop() }
        try Poll.until("a first flip", timeout: 20, reading: { try daemon.framesFlipped() }, satisfies: { $0 > 0 })
        let stats = try daemon.result("stats")
        XCTAssertEqual(stats["healthy"] as? Bool, true)
        XCTAssertEqual(stats["health_reason"] as? String, "ok")
        XCTAssertEqual(stats["present_failures"] as? [String: Int], [:])
        XCTAssertEqual(stats["master_lost"] as? Int, 0)
        XCTAssertEqual(stats["flip_timeouts"] as? Int, 0)

        daemon.process.signal(SIGUSR1)
        try Poll.until("health_reason 'waiting for DRM master'", timeout: 10,
                       reading: { try daemon.result("stats")["health_reason"] as? String }, satisfies: { $0 == "waiting for DRM master" })
        // The default scene has a seconds clock: it keeps composing, but nothing is presented.
        let presented = try XCTUnwrap(try daemon.result("stats")["frames_presented"] as? Int)
        let composed = try XCTUnwrap(try daemon.result("stats")["frames_composed"] as? Int)
        try Poll.until("the clock to keep composing (frames_composed above \(composed))", timeout: 5,
                       reading: { try daemon.result("stats")["frames_composed"] as? Int }, satisfies: { ($0 ?? 0) > composed })
        XCTAssertEqual(try daemon.result("stats")["frames_presented"] as? Int, presented, "nothing presented while handed over")
        XCTAssertEqual(try daemon.result("stats")["healthy"] as? Bool, true)

        daemon.process.signal(SIGUSR2)
        try Poll.until("presents to resume (frames_presented above \(presented))", timeout: 5,
                       reading: { try daemon.result("stats")["frames_presented"] as? Int }, satisfies: { ($0 ?? 0) > presented })
        XCTAssertEqual(try daemon.result("stats")["health_reason"] as? String, "ok")
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("SIGUSR1: handing the display over"), result.stderr)
        XCTAssertTrue(result.stderr.contains("display regained"), result.stderr)
    }

    /// `health:` in the config reaches the engine: a scene whose widgets draw black on black turns the screen
    /// `black` after `black_after`, an `error` event (`screen_black`) says so, and with `restart_on: [black]` the
    /// health signal (the watchdog's) is unhealthy.
    func testBlackWidgetsOnBlackAreABlackScreenThatRestartOnMakesUnhealthy() throws {
        let dir = try KioskdProcess.scratchDirectory("health-black")
        let scene = dir.appendingPathComponent("black.yaml"), config = dir.appendingPathComponent("kioskd.yaml")
        try """
            size: display
            background: "#000000"
            widgets:
              - {id: title, type: text, text: "Pump station 3", x: 10, y: 10, width: 200, height: 40, foreground: "#000000"}
            """.write(to: scene, atomically: true, encoding: .utf8)
        try """
            backend: headless
            mode: 320x240@60
            scene: \(scene.path)
            health:
              restart_on: [black]
              black_after: 0.5
            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path])
        defer { _ = daemon.stop() }
        try Poll.until("health_reason 'black: ...'", timeout: 20, interval: 0.05,
                       reading: { try daemon.result("stats")["health_reason"] as? String }, satisfies: { $0?.hasPrefix("black: ") == true })
        let stats = try daemon.result("stats")
        XCTAssertEqual(stats["healthy"] as? Bool, false, "restart_on lists black")
        XCTAssertEqual((stats["fingerprint"] as? String)?.count, 16)

        // Text that shows clears it; black again, and the event comes again (subscribed now, whatever the start).
        let events = try ControlEventStream(daemon, events: ["error"])
        _ = try daemon.result("widget.set", ##"{"id": "title", "props": {"foreground": "#ffffff"}}"##)
        try Poll.until("health_reason 'ok'", timeout: 10, interval: 0.05,
                       reading: { try daemon.result("stats")["health_reason"] as? String }, satisfies: { $0 == "ok" })
        XCTAssertEqual(try daemon.result("stats")["healthy"] as? Bool, true)
        _ = try daemon.result("widget.set", ##"{"id": "title", "props": {"foreground": "#000000"}}"##)
        let event = try events.waitFor("an error event screen_black", timeout: 10) { event in
            event.name == "error" && event.data["code"] as? String == "screen_black"
        }
        XCTAssertTrue((event.data["message"] as? String)?.hasPrefix("black: ") == true, "\(event.data)")
        try Poll.until("healthy false", timeout: 5, interval: 0.05,
                       reading: { try daemon.result("stats")["healthy"] as? Bool }, satisfies: { $0 == false })
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("black: the screen has been black"), result.stderr)
    }
}
