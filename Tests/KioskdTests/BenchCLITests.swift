import Foundation
import KioskTestSupport
import XCTest

/// `kioskd bench --json` end to end: every scenario present, each figure measured or null, and each ratio made of
/// exactly the figures beside it. It runs every scenario, so it is the longest of the daemon's tests: test-all runs it
/// in the host tier from its optimized test bundle, on code built as kioskd ships, and not under ThreadSanitizer.
final class BenchCLITests: XCTestCase {
    func testBenchJSONHasEveryScenarioWithMeasuredFiguresAndConsistentRatios() throws {
        let r = try KioskdProcess.run(["bench", "--frames", "10", "--mode", "640x360", "--workers", "2", "--json"], timeout: 600)
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let scenarios = try XCTUnwrap(report["scenarios"] as? [String: Any])
        XCTAssertEqual(Set(scenarios.keys), ["dashboard", "page-slide", "page-fade", "update-storm", "startup", "images", "pages", "plain-fill", "fingerprint", "vnc", "video", "web"])
        XCTAssertTrue(scenarios["video"] is NSNull, "video runs only when named")
        XCTAssertTrue(scenarios["web"] is NSNull, "web runs only when named")

        // Plain fills: both paths measured side by side for each fill and damage, the ratio from exactly those figures.
        let plain = try XCTUnwrap(scenarios["plain-fill"] as? [String: Any])
        XCTAssertEqual(plain["surface_bytes"] as? Int, 1920 * 1080 * 4)
        let cases = try XCTUnwrap(plain["cases"] as? [[String: Any]])
        XCTAssertEqual(Set(cases.compactMap { c in (c["fill"] as? String).map { "\($0)/\(c["damage"] as? String ?? "?")" } }),
                       ["solid/clock 480x120", "solid/full screen", "gradient/clock 480x120", "gradient/full screen"])
        for c in cases {
            let direct = try XCTUnwrap(c["direct_ms"] as? Double, "\(c)"), surface = try XCTUnwrap(c["surface_ms"] as? Double, "\(c)")
            XCTAssertGreaterThan(direct, 0, "\(c)")
            XCTAssertGreaterThan(surface, 0, "\(c)")
            XCTAssertEqual(try XCTUnwrap(c["direct_vs_surface"] as? Double, "\(c)"), direct / surface, accuracy: 1e-9)
        }
        let renders = try XCTUnwrap(plain["surface_render_ms"] as? [String: Any])
        for fill in ["solid", "gradient"] { XCTAssertGreaterThan(renders[fill] as? Double ?? 0, 0, fill) }
        XCTAssertEqual(plain["drawn_without_surface"] as? [String: Bool], ["solid": true, "gradient": false])

        // Fingerprints: the hash of the tiles under each damage against the copy of that damage, side by side.
        let fingerprint = try XCTUnwrap(scenarios["fingerprint"] as? [String: Any])
        XCTAssertEqual(fingerprint["tile_size"] as? Int, 64)
        let hashCases = try XCTUnwrap(fingerprint["cases"] as? [[String: Any]])
        XCTAssertEqual(hashCases.compactMap { $0["damage"] as? String }, ["clock 480x120", "full screen"])
        for c in hashCases {
            let copy = try XCTUnwrap(c["copy_ms"] as? Double, "\(c)"), hash = try XCTUnwrap(c["fingerprint_ms"] as? Double, "\(c)")
            XCTAssertGreaterThan(copy, 0, "\(c)")
            XCTAssertGreaterThan(hash, 0, "\(c)")
            XCTAssertEqual(try XCTUnwrap(c["fingerprint_vs_copy"] as? Double, "\(c)"), hash / copy, accuracy: 1e-9)
            let compose = try XCTUnwrap(c["compose_ms"] as? Double, "\(c)")
            XCTAssertGreaterThan(compose, 0, "\(c)")
            XCTAssertEqual(try XCTUnwrap(c["fingerprint_vs_compose"] as? Double, "\(c)"), hash / compose, accuracy: 1e-9)
            XCTAssertGreaterThanOrEqual(c["hashed_pixels"] as? Int ?? 0, c["damage_pixels"] as? Int ?? .max, "whole tiles")
        }

        // VNC: bytes to a viewer asking for changes against one asking for whole frames, side by side in one run.
        let vnc = try XCTUnwrap(scenarios["vnc"] as? [String: Any])
        XCTAssertEqual(vnc["mode"] as? String, "640x360@60")
        let damageRate = try XCTUnwrap(vnc["damage_bytes_per_second"] as? Double, "\(vnc)")
        let wholeRate = try XCTUnwrap(vnc["full_frame_bytes_per_second"] as? Double, "\(vnc)")
        let everyFrame = try XCTUnwrap(vnc["every_frame_whole_bytes_per_second"] as? Double, "\(vnc)")
        XCTAssertGreaterThan(damageRate, 0, "the dashboard's ticker and clock change: \(vnc)")
        XCTAssertGreaterThan(vnc["full_frame_updates"] as? Int ?? 0, 0, "\(vnc)")
        XCTAssertGreaterThan(vnc["frames_presented"] as? Int ?? 0, 0, "\(vnc)")
        XCTAssertEqual(try XCTUnwrap(vnc["damage_vs_full_frame"] as? Double), damageRate / wholeRate, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(vnc["damage_vs_every_frame_whole"] as? Double), damageRate / everyFrame, accuracy: 1e-9)
        XCTAssertLessThan(damageRate, wholeRate, "only the damage is sent: \(vnc)")
        let zrleRate = try XCTUnwrap(vnc["damage_zrle_bytes_per_second"] as? Double, "\(vnc)")
        XCTAssertGreaterThan(zrleRate, 0, "\(vnc)")
        XCTAssertEqual(try XCTUnwrap(vnc["damage_zrle_vs_full_frame"] as? Double), zrleRate / wholeRate, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(vnc["damage_zrle_vs_damage"] as? Double), zrleRate / damageRate, accuracy: 1e-9)

        let dashboard = try XCTUnwrap(scenarios["dashboard"] as? [String: Any])
        XCTAssertEqual(dashboard["full_frame_bytes"] as? Int, 640 * 360 * 4)
        let memcpy = try XCTUnwrap(dashboard["memcpy_ms_per_frame"] as? Double)
        var naiveTotals: [String: Double] = [:]
        for strategy in ["direct", "through_surfaces"] {
            let naive = try XCTUnwrap(dashboard["naive_\(strategy)"] as? [String: Any], strategy)
            // The baseline draws into memory with no display: flips, missed vblanks and a first frame are not measured.
            for key in ["frames_flipped", "missed_vblanks", "first_frame_ms"] { XCTAssertTrue(naive[key] is NSNull, "naive_\(strategy).\(key)") }
            naiveTotals[strategy] = try XCTUnwrap(naive["total_cpu_ms_per_frame"] as? Double)
            XCTAssertGreaterThan(naiveTotals[strategy] ?? 0, 0)
        }
        let ratios = try XCTUnwrap(dashboard["ratios"] as? [String: Any])
        for (key, name) in [("engine_round_robin", "round_robin"), ("engine_priority", "priority")] {
            let f = try XCTUnwrap(dashboard[key] as? [String: Any], key)
            XCTAssertEqual(f["frames_flipped"] as? Int, 10, key)
            XCTAssertNotNil(f["missed_vblanks"] as? Int, key)
            XCTAssertGreaterThan(f["first_frame_ms"] as? Double ?? 0, 0, key)
            let total = try XCTUnwrap(f["total_cpu_ms_per_frame"] as? Double, key)
            for (strategy, naiveTotal) in naiveTotals {
                XCTAssertEqual(try XCTUnwrap(ratios["\(name)_cpu_vs_naive_\(strategy)"] as? Double), total / naiveTotal, accuracy: 1e-9)
            }
            XCTAssertEqual(try XCTUnwrap(ratios["\(name)_cpu_vs_memcpy"] as? Double), total / memcpy, accuracy: 1e-9)
            let bytes = try XCTUnwrap(f["bytes_written_per_frame"] as? Int, key)
            XCTAssertEqual(try XCTUnwrap(ratios["\(name)_bytes_vs_full_frame"] as? Double), Double(bytes) / Double(640 * 360 * 4), accuracy: 1e-9)
        }

        // Page transitions: composed and on two overlay planes side by side, each ratio from exactly the figures
        // beside it, and issue 27's verdict from the composed row.
        for (name, target) in [("page-slide", 3.0), ("page-fade", 4.0)] {
            let transition = try XCTUnwrap(scenarios[name] as? [String: Any], name)
            XCTAssertEqual(transition["mode"] as? String, "1920x1080@60", name)
            let memcpy = try XCTUnwrap(transition["memcpy_ms_per_frame"] as? Double, name)
            let engine = try XCTUnwrap(transition["engine"] as? [String: Any], name)
            let planes = try XCTUnwrap(transition["engine_planes"] as? [String: Any], name)
            let ratios = try XCTUnwrap(transition["ratios"] as? [String: Any], name)
            let main = try XCTUnwrap(engine["main_cpu_ms_per_frame"] as? Double, name)
            XCTAssertEqual(try XCTUnwrap(ratios["cpu_vs_memcpy"] as? Double, name),
                           try XCTUnwrap(engine["total_cpu_ms_per_frame"] as? Double, name) / memcpy, accuracy: 1e-9)
            XCTAssertEqual(try XCTUnwrap(ratios["main_cpu_vs_memcpy"] as? Double, name), main / memcpy, accuracy: 1e-9)
            XCTAssertEqual(try XCTUnwrap(ratios["planes_main_cpu_vs_memcpy"] as? Double, name),
                           try XCTUnwrap(planes["main_cpu_ms_per_frame"] as? Double, name) / memcpy, accuracy: 1e-9)
            XCTAssertEqual(planes["frames_flipped"] as? Int, 10, name)
            XCTAssertNotNil(transition["plane_frames_copied"] as? Int, name)
            XCTAssertNotNil(transition["direct_frames"] as? Int, name)
            let cold = try XCTUnwrap(transition["cold_memcpy_ms_per_frame"] as? Double, name)
            XCTAssertEqual(try XCTUnwrap(ratios["main_cpu_vs_cold_memcpy"] as? Double, name), main / cold, accuracy: 1e-9)
            XCTAssertEqual(transition["main_cpu_target_vs_memcpy"] as? Double, target, name)
            let p99 = try XCTUnwrap(engine["main_ms_p99"] as? Double, name)
            XCTAssertEqual(transition["target_met"] as? Bool, main / memcpy <= target && p99 <= 4, name)
        }

        let stormScenario = try XCTUnwrap(scenarios["update-storm"] as? [String: Any])
        // Side by side in one run: each number of workers named by --workers (only 2 here, to keep the test short),
        // window off (kioskd's default) and auto; the scenario's verdict is every window-off run's (as kioskd ships), each
        // run's is all three widgets'.
        let stormRuns = try XCTUnwrap(stormScenario["runs"] as? [[String: Any]])
        XCTAssertEqual(stormRuns.compactMap { $0["workers"] as? Int }, [2])
        var shippedVerdicts: [Bool?] = []
        for run in stormRuns {
            let off = try XCTUnwrap(run["repaint_window_off"] as? [String: Any])
            let storm = try XCTUnwrap(run["repaint_window_auto"] as? [String: Any])
            XCTAssertEqual(off["repaint_window"] as? String, "off")
            XCTAssertEqual(storm["repaint_window"] as? String, "auto")
            XCTAssertEqual(storm["workers"] as? Int, run["workers"] as? Int)
            XCTAssertTrue(off["repaint_lead_ms"] is NSNull)
            XCTAssertNotNil(storm["repaint_lead_ms"] as? Double)
            for widget in ["storm", "clock", "label"] {
                let lag = try XCTUnwrap(storm[widget] as? [String: Any], widget)
                XCTAssertNotNil(lag["updates"] as? Int, widget)
                for key in ["lag_ms_p50", "lag_ms_p99", "lag_ms_max"] { XCTAssertTrue(lag[key] is Double || lag[key] is NSNull, "\(widget).\(key)") }
            }
            let render = try XCTUnwrap(storm["storm_render_ms"] as? Double)
            let frameMs = try XCTUnwrap(storm["frame_ms"] as? Double)
            XCTAssertEqual(try XCTUnwrap(storm["target_lag_ms"] as? Double), 2 * render + frameMs, accuracy: 1e-9)
            let beyond = try XCTUnwrap(storm["storm_lag_beyond_renders_ms_p99"] as? Double)
            XCTAssertEqual(storm["storm_target_met"] as? Bool, beyond <= frameMs)
            let verdicts = ["storm_target_met", "label_target_met", "clock_target_met"].map { storm[$0] as? Bool }
            XCTAssertEqual(storm["target_met"] as? Bool, verdicts.contains(nil) ? nil : verdicts.allSatisfy { $0 == true })
            let offVerdicts = ["storm_target_met", "label_target_met", "clock_target_met"].map { off[$0] as? Bool }
            XCTAssertEqual(off["target_met"] as? Bool, offVerdicts.contains(nil) ? nil : offVerdicts.allSatisfy { $0 == true })
            shippedVerdicts.append(off["target_met"] as? Bool)
            XCTAssertGreaterThan(storm["frames_composed_per_second"] as? Double ?? 0, 0)
        }
        XCTAssertEqual(stormScenario["target_met"] as? Bool, shippedVerdicts.contains(nil) ? nil : shippedVerdicts.allSatisfy { $0 == true })

        let startup = try XCTUnwrap(scenarios["startup"] as? [String: Any])
        let runs = try XCTUnwrap(startup["runs"] as? [[String: Any]])
        XCTAssertEqual(runs.compactMap { $0["mode"] as? String }, ["800x480", "1920x1080"])
        // Issue 16's targets, judged on the 800x480 run.
        XCTAssertEqual(startup["target_peak_rss_kib"] as? Int, 32 * 1024)
        XCTAssertEqual(startup["target_private_dirty_kib"] as? Int, 12 * 1024)
        let startupSmall = try XCTUnwrap(runs.first)
        XCTAssertEqual(startup["target_met"] as? Bool, (startupSmall["peak_rss_kib"] as? Int ?? .max) <= 32 * 1024
                       && (startupSmall["private_dirty_kib"] as? Int ?? .max) <= 12 * 1024)
        for run in runs {
            XCTAssertGreaterThan(run["first_frame_ms"] as? Double ?? 0, 0, "\(run)")
            // The child's own high-water mark, private and file-backed parts each below it.
            let peak = try XCTUnwrap(run["peak_rss_kib"] as? Int, "\(run)")
            XCTAssertGreaterThan(peak, 1024, "\(run)")
            for key in ["rss_anon_kib", "rss_file_kib", "private_dirty_kib"] {
                let part = try XCTUnwrap(run[key] as? Int, "\(key): \(run)")
                XCTAssertTrue(part > 0 && part <= peak, "\(key): \(run)")
            }
        }

        let images = try XCTUnwrap(scenarios["images"] as? [String: Any])
        let small = try XCTUnwrap((images["image_400x240"] as? [String: Any])?["peak_rss_kib"] as? Int)
        let poster = try XCTUnwrap((images["image_12000x12000"] as? [String: Any])?["peak_rss_kib"] as? Int)
        XCTAssertEqual(images["peak_rss_difference_kib"] as? Int, poster - small)
        XCTAssertEqual(images["target_met"] as? Bool, poster - small <= 8 * 1024)

        let pages = try XCTUnwrap(scenarios["pages"] as? [String: Any])
        XCTAssertEqual(pages["page_seconds"] as? Double, 0.5, "--frames 10: the shortest pages, half a second each")
        let one = try XCTUnwrap((pages["one_page"] as? [String: Any])?["peak_rss_kib"] as? Int)
        let twenty = try XCTUnwrap((pages["twenty_pages"] as? [String: Any])?["peak_rss_kib"] as? Int)
        XCTAssertEqual(pages["peak_rss_difference_kib"] as? Int, twenty - one)
        XCTAssertEqual(pages["target_met"] as? Bool, twenty - one <= 24 * 1024)
        XCTAssertGreaterThan(pages["twenty_pages_surface_bytes"] as? Int ?? 0, 0)
        XCTAssertGreaterThanOrEqual(pages["timed_changes"] as? Int ?? 0, 19)
        XCTAssertNotNil(pages["frames_missed_at_changes"] as? Int)
        let nearChanges = try XCTUnwrap(pages["vblanks_at_changes"] as? Int)
        let elsewhere = try XCTUnwrap(pages["vblanks_elsewhere"] as? Int)
        // The windows split the loop's vblanks: some follow the timed changes, most do not.
        XCTAssertGreaterThan(nearChanges, 0)
        XCTAssertGreaterThan(elsewhere, nearChanges)
        XCTAssertLessThanOrEqual(try XCTUnwrap(pages["frames_missed_elsewhere"] as? Int), elsewhere)
        XCTAssertGreaterThan(pages["page_show_to_purged_ms"] as? Double ?? 0, 0)
    }
}
