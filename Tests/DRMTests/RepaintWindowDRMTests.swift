import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// The repaint window on vkms against presenting at once, alternated in one VM boot (issue 28 item 9): 300 frames
/// of the default scene with the window off, then with kioskd's default (`auto`, no flag, so the run also checks the
/// default), then off again. With the window on, the output misses no more vblanks than without it: no more than
/// the worse of the two runs without it made just before and just after it, plus one, plus the difference between
/// those two. A run of 300 frames under emulation misses anywhere from a few to hundreds of vblanks depending on
/// what else the host runs, and the two runs without the window measure that noise where the comparison is made
/// (docs/bench-log.md, issue 28 item 9, has the alternations this tolerance was read from): on a quiet host, where
/// they miss 2 and 3, the window may miss 5 at most, so the first self-closing rule's 7 and 5 would fail. What holds
/// however loaded the host is the self-closing rule, asserted too: each miss and near miss closes the window for a
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

    func testTheWindowMissesNoMoreVblanksThanPresentingAtOnce() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-repaint-window")
        let offBefore = try run(window: "off", "off-before", in: dir)
        let on = try run(window: nil, "default", in: dir)
        let offAfter = try run(window: "off", "off-after", in: dir)
        let missedOn = try missed(on, "default")
        let missedOff = [try missed(offBefore, "off before"), try missed(offAfter, "off after")]
        let windowMisses = try XCTUnwrap(on["repaint_window_misses"] as? Int)
        let nearMisses = try XCTUnwrap(on["repaint_window_near_misses"] as? Int)
        print("repaint window, 300 frames of the default scene: missed vblanks off \(missedOff[0]), default (auto) \(missedOn) (window misses \(windowMisses), near misses \(nearMisses), lead at the end \(on["repaint_window_ms"] ?? "-") ms), off \(missedOff[1])")
        for off in [offBefore, offAfter] {
            XCTAssertEqual(off["repaint_window_misses"] as? Int, 0, "no window, no window misses")
            XCTAssertEqual(off["repaint_window_near_misses"] as? Int, 0)
        }
        let noise = abs(missedOff[0] - missedOff[1])
        XCTAssertLessThanOrEqual(missedOn, missedOff.max()! + 1 + noise,
                                 "with the window on, no more missed vblanks than presenting at once (off \(missedOff))")
        // Closes come at least a first hold apart and the hold doubles while they come within ten seconds: at 0, 1,
        // 3, 7 and 15 s at the earliest, so a run of T seconds (its vblanks, flipped or missed, at 60 Hz) closes the
        // window at most log2(T + 1) + 1 times, each with at most one window miss and one near miss.
        let seconds = Double(300 + missedOn) / 60
        let closes = Int(log2(seconds + 1)) + 1
        XCTAssertLessThanOrEqual(windowMisses, closes, "the window closed itself after its misses (\(seconds) s)")
        XCTAssertLessThanOrEqual(nearMisses, closes, "the window closed itself after its near misses (\(seconds) s)")
    }
}
