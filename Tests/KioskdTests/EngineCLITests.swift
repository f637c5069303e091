import Foundation
import KioskTestSupport
import XCTest

/// The layer engine through the command line: the dashboard's telemetry in --stats-out.
final class EngineCLITests: XCTestCase {
    func testDashboardStatsCarryTheEngineCounters() throws {
        let dir = try KioskdProcess.scratchDirectory("dashboard-stats")
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--scene", "default", "--fps-overlay", "--frames", "90",
                                       "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 90)
        for key in ["renders_started", "renders_completed", "stale_renders_dropped", "frames_composed", "compositions_replaced",
                    "loop_wakeups"] {
            XCTAssertNotNil(s[key] as? Int, key)
        }
        XCTAssertGreaterThanOrEqual(s["renders_completed"] as? Int ?? 0, 20, "every widget rendered")
        let bytes = try XCTUnwrap(s["bytes_copied_per_frame"] as? [String: Any])
        XCTAssertNotNil(bytes["p50"] as? Int)
        XCTAssertNotNil(bytes["max"] as? Int)
        let renderMs = try XCTUnwrap(s["render_ms"] as? [String: Any])
        for kind in ["text", "image", "clock", "rect", "ticker", "fps"] {
            let k = try XCTUnwrap(renderMs[kind] as? [String: Any], "render_ms.\(kind)")
            XCTAssertNotNil(k["p50"] as? Double)
            XCTAssertNotNil(k["p99"] as? Double)
        }
        XCTAssertGreaterThan(s["fps"] as? Double ?? 0, 0)
        let firstFrame = try XCTUnwrap(s["first_frame_ms"] as? Double, "first_frame_ms is measured")
        XCTAssertGreaterThan(firstFrame, 0)
        let memory = try XCTUnwrap(s["memory"] as? [String: Any], "memory is reported")
        let peak = try XCTUnwrap(memory["peak_rss_kib"] as? Int)
        XCTAssertGreaterThanOrEqual(peak, try XCTUnwrap(memory["rss_kib"] as? Int))
        XCTAssertEqual(memory["rss_kib"] as? Int, (memory["rss_anon_kib"] as? Int ?? 0) + (memory["rss_file_kib"] as? Int ?? 0)
                       + (memory["rss_shmem_kib"] as? Int ?? 0), "resident = private + file-backed + shared memory")
    }
}
