import Foundation
import KioskTestSupport
import XCTest

/// The health signal and the display handover of a running kioskd, over its control socket, on the headless
/// backend (the same wiring as on DRM, without a master to drop), by signals to the process. The health settings'
/// rules (a black screen, `restart_on`) are tested in process (KioskAppTests' `ScreenHealthTests`).
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
}
