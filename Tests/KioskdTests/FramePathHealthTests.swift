import Foundation
import KioskTestSupport
import XCTest

/// The health signal and the display handover of a running kioskd, over its control socket, on the headless
/// backend (the same wiring as on DRM, without a master to drop).
final class FramePathHealthTests: XCTestCase {
    private func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    func testStatsReportHealthAndSIGUSR1HandsTheDisplayOverUntilSIGUSR2() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60"])
        defer { _ = daemon.stop() }
        XCTAssertTrue(try waitFor(20) { try daemon.framesFlipped() > 0 })
        let stats = try daemon.result("stats")
        XCTAssertEqual(stats["healthy"] as? Bool, true)
        XCTAssertEqual(stats["health_reason"] as? String, "ok")
        XCTAssertEqual(stats["present_failures"] as? [String: Int], [:])
        XCTAssertEqual(stats["master_lost"] as? Int, 0)
        XCTAssertEqual(stats["flip_timeouts"] as? Int, 0)

        daemon.process.signal(SIGUSR1)
        XCTAssertTrue(try waitFor(10) { try daemon.result("stats")["health_reason"] as? String == "waiting for DRM master" })
        // The default scene has a seconds clock: it keeps composing, but nothing is presented.
        let presented = try XCTUnwrap(try daemon.result("stats")["frames_presented"] as? Int)
        let composed = try XCTUnwrap(try daemon.result("stats")["frames_composed"] as? Int)
        XCTAssertTrue(try waitFor(5) { try daemon.result("stats")["frames_composed"] as? Int ?? 0 > composed }, "the clock keeps composing")
        XCTAssertEqual(try daemon.result("stats")["frames_presented"] as? Int, presented, "nothing presented while handed over")
        XCTAssertEqual(try daemon.result("stats")["healthy"] as? Bool, true)

        daemon.process.signal(SIGUSR2)
        XCTAssertTrue(try waitFor(5) { try daemon.result("stats")["frames_presented"] as? Int ?? 0 > presented }, "presents resume")
        XCTAssertEqual(try daemon.result("stats")["health_reason"] as? String, "ok")
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("SIGUSR1: handing the display over"), result.stderr)
        XCTAssertTrue(result.stderr.contains("display regained"), result.stderr)
    }
}
