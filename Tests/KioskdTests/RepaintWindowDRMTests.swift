import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// The repaint window on vkms, against presenting at once, in one VM boot: 300 frames of the default scene with the
/// window on (`--repaint-window auto`), then 300 with it off, kioskd's default. The missed vblanks are printed side by side,
/// not compared by an assertion: on the shared build host under TCG one run of 300 frames misses anywhere from a few
/// to most of its vblanks depending on the other jobs, so the comparison is made over several alternations
/// (docs/bench-log.md, issue 28 item 9). What holds however loaded the host is the self-closing rule, asserted here:
/// each present that goes out late, and each vblank the window misses, closes the window for a hold of a second at
/// least, doubled within ten seconds, so the window itself misses only a few vblanks in a run.
final class RepaintWindowDRMTests: XCTestCase {
    private func run(window: String, in dir: URL) throws -> [String: Any] {
        let stats = dir.appendingPathComponent("stats-\(window).json")
        // Off is kioskd's default: that run names no window, so it also checks the default.
        let flag = window == "off" ? [] : ["--repaint-window", window]
        let r = try KioskdProcess.run(["run", "--mode", "1024x768", "--frames", "300"] + flag + ["--stats-out", stats.path],
                                      timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 300, "window \(window)")
        return s
    }

    func testTheWindowClosesItselfAndIsComparedWithPresentingAtOnce() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-repaint-window")
        let on = try run(window: "auto", in: dir)
        let off = try run(window: "off", in: dir)
        let missedOn = try XCTUnwrap(on["missed_vblanks"] as? Int, "missed_vblanks is reported")
        let missedOff = try XCTUnwrap(off["missed_vblanks"] as? Int, "missed_vblanks is reported")
        let windowMisses = try XCTUnwrap(on["repaint_window_misses"] as? Int)
        let late = try XCTUnwrap(on["repaint_window_late_presents"] as? Int)
        let ratio = missedOff > 0 ? String(format: "%.2f", Double(missedOn) / Double(missedOff)) : "null"
        print("repaint window, 300 frames of the default scene: missed vblanks auto \(missedOn) (window misses \(windowMisses), late presents \(late), lead at the end \(on["repaint_window_ms"] ?? "-") ms), off \(missedOff), auto/off \(ratio)")
        XCTAssertEqual(off["repaint_window_misses"] as? Int, 0, "no window, no window misses")
        XCTAssertEqual(off["repaint_window_late_presents"] as? Int, 0)
        // Closes come at least a first hold apart and the hold doubles while they come within ten seconds: at 0, 1,
        // 3, 7 and 15 s at the earliest, so a run of T seconds (its vblanks, flipped or missed, at 60 Hz) closes the
        // window at most log2(T + 1) + 1 times, each with at most one window miss and one late present.
        let seconds = Double(300 + missedOn) / 60
        let closes = Int(log2(seconds + 1)) + 1
        XCTAssertLessThanOrEqual(windowMisses, closes, "the window closed itself after its misses (\(seconds) s)")
        XCTAssertLessThanOrEqual(late, closes, "the window closed itself after its late presents (\(seconds) s)")
    }
}
