import Foundation
import KioskTestSupport
import XCTest

/// `kioskd bench --scenario web --json` end to end, kept short: kioskd's figures measured, cog's measured beside them
/// (cog is part of the suite's set-up), and the ratios and verdict made of exactly those figures.
final class WebBenchTests: XCTestCase {
    func testTheWebScenarioMeasuresKioskdAndCogSideBySide() throws {
        let r = try KioskdProcess.run(["bench", "--scenario", "web", "--frames", "60", "--json"], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let scenarios = try XCTUnwrap(report["scenarios"] as? [String: Any])
        let web = try XCTUnwrap(scenarios["web"] as? [String: Any], "\(scenarios.keys)")
        XCTAssertTrue(scenarios["dashboard"] is NSNull, "only the scenario named runs")
        let kioskd = try XCTUnwrap(web["kioskd"] as? [String: Any])
        XCTAssertEqual(kioskd["seconds"] as? Double, 2)
        XCTAssertGreaterThanOrEqual(kioskd["processes"] as? Int ?? 0, 2, "kioskd and WebKit's web process: \(kioskd)")
        let rss = try XCTUnwrap(kioskd["rss_kib"] as? Int)
        XCTAssertGreaterThan(rss, 10_000)
        let cpu = try XCTUnwrap(kioskd["cpu_percent"] as? Double)
        XCTAssertGreaterThan(cpu, 0)
        XCTAssertGreaterThan(kioskd["page_frames_per_second"] as? Double ?? 0, 1, "the animation's frames were shown: \(kioskd)")
        XCTAssertGreaterThan(kioskd["main_thread_ms_per_frame"] as? Double ?? -1, 0, "\(kioskd)")
        XCTAssertTrue(kioskd["web_thread_ms_per_frame"] is Double || kioskd["web_thread_ms_per_frame"] is NSNull)
        XCTAssertNotNil(web["static_loop_wakeups"] as? Int, "\(web)")
        XCTAssertEqual(web["static_seconds"] as? Double, 2, "--frames 60: the shortest static span, two seconds")

        let cog = try XCTUnwrap(web["cog"] as? [String: Any], "cog measured: \(web["cog_problem"] ?? "")")
        XCTAssertTrue(web["cog_problem"] is NSNull)
        let cogRSS = try XCTUnwrap(cog["rss_kib"] as? Int), cogCPU = try XCTUnwrap(cog["cpu_percent"] as? Double)
        XCTAssertGreaterThan(cogRSS, 10_000)
        let rssRatio = try XCTUnwrap(web["rss_kioskd_vs_cog"] as? Double)
        XCTAssertEqual(rssRatio, Double(rss) / Double(cogRSS), accuracy: 1e-9)
        if cogCPU > 0 {
            let cpuRatio = try XCTUnwrap(web["cpu_kioskd_vs_cog"] as? Double)
            XCTAssertEqual(cpuRatio, cpu / cogCPU, accuracy: 1e-9)
            XCTAssertEqual(web["target_met"] as? Bool, rssRatio <= 1 && cpuRatio <= 1)
        } else {
            XCTAssertTrue(web["cpu_kioskd_vs_cog"] is NSNull)
            XCTAssertTrue(web["target_met"] is NSNull)
        }
    }
}
