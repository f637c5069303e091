import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// The repaint window on vkms against kioskd's default, alternated in one VM boot (issue 28 item 9): 300 frames of
/// the default scene with the default settings (no flag), then with `--repaint-window auto`, then with the default
/// again. Item 9 asks that the default settings miss no more vblanks than the window off: the default is off, so
/// both default runs must show no window at all (no window misses, no near misses, no lead). `auto` is not the
/// default because in the VM it missed more vblanks than presenting at once in most alternations
/// (docs/bench-log.md, issue 28 item 9); its missed vblanks are printed beside the default's, and what holds
/// however loaded the host is its self-closing rule, asserted here: each miss and near miss closes the window for a
/// hold of a second at least, doubled within ten seconds, so the window itself misses only a few vblanks in a run.
final class RepaintWindowDRMTests: XCTestCase {
    private func run(window: String?, _ name: String, in dir: URL) throws -> [String: Any] {
        let stats = dir.appendingPathComponent("stats-\(name).json")
        let flag = window.map { ["--repaint-window", $0] } ?? []
        let r = try KioskdProcess.run(["run", "--mode", "1024x768", "--frames", "300"] + flag + ["--stats-out", stats.path],
                                      timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 300, name)
        return s
    }

    private func missed(_ stats: [String: Any], _ name: String) throws -> Int {
        try XCTUnwrap(stats["missed_vblanks"] as? Int, "\(name): missed_vblanks is reported")
    }

    func testTheDefaultHasNoWindowAndAutoClosesItself() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-repaint-window")
        let before = try run(window: nil, "default-before", in: dir)
        let auto = try run(window: "auto", "auto", in: dir)
        let after = try run(window: nil, "default-after", in: dir)
        let missedAuto = try missed(auto, "auto")
        let missedDefault = [try missed(before, "default before"), try missed(after, "default after")]
        let windowMisses = try XCTUnwrap(auto["repaint_window_misses"] as? Int)
        let nearMisses = try XCTUnwrap(auto["repaint_window_near_misses"] as? Int)
        print("repaint window, 300 frames of the default scene: missed vblanks default \(missedDefault[0]), auto \(missedAuto) (window misses \(windowMisses), near misses \(nearMisses), lead at the end \(auto["repaint_window_ms"] ?? "-") ms), default \(missedDefault[1])")
        for (name, stats) in [("default before", before), ("default after", after)] {
            XCTAssertEqual(stats["repaint_window_misses"] as? Int, 0, "\(name): no window, no window misses")
            XCTAssertEqual(stats["repaint_window_near_misses"] as? Int, 0, name)
            XCTAssertEqual(stats["repaint_window_ms"] as? Double, 0, "\(name): no lead")
        }
        // Closes come at least a first hold apart and the hold doubles while they come within ten seconds: at 0, 1,
        // 3, 7 and 15 s at the earliest, so a run of T seconds (its vblanks, flipped or missed, at 60 Hz) closes the
        // window at most log2(T + 1) + 1 times, each with at most one window miss and one near miss.
        let seconds = Double(300 + missedAuto) / 60
        let closes = Int(log2(seconds + 1)) + 1
        XCTAssertLessThanOrEqual(windowMisses, closes, "the window closed itself after its misses (\(seconds) s)")
        XCTAssertLessThanOrEqual(nearMisses, closes, "the window closed itself after its near misses (\(seconds) s)")
    }
}
