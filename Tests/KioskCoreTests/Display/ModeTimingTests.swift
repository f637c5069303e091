import KioskCore
import XCTest

/// Exact refresh rates from published CEA-861 and VESA DMT timings, computed the way the kernel's
/// drm_mode_vrefresh() does before it rounds.
final class ModeTimingTests: XCTestCase {
    private func hz(_ timing: ModeTiming) throws -> String {
        ModeTiming.formatHz(try XCTUnwrap(timing.refreshRate))
    }

    func testCEA1080pAt60And5994() throws {
        XCTAssertEqual(try hz(ModeTiming(clockKHz: 148_500, htotal: 2200, vtotal: 1125)), "60.00")
        XCTAssertEqual(try hz(ModeTiming(clockKHz: 148_352, htotal: 2200, vtotal: 1125)), "59.94")
    }

    func testDMT1920x1200ReducedBlankingAndNormalBlankingAreDifferentRates() throws {
        let reduced = ModeTiming(clockKHz: 154_000, htotal: 2080, vtotal: 1235)
        let normal = ModeTiming(clockKHz: 193_250, htotal: 2592, vtotal: 1245)
        XCTAssertEqual(try hz(reduced), "59.95")
        XCTAssertEqual(try hz(normal), "59.88")
        // Both round to 60 Hz, yet they are two modes.
        XCTAssertEqual(Int(try XCTUnwrap(reduced.refreshRate).rounded()), Int(try XCTUnwrap(normal.refreshRate).rounded()))
    }

    func testInterlaceDoublesAndDoubleScanHalves() throws {
        // CEA VIC 5, 1920x1080i: 74.25 MHz over a 2200x1125 frame is 30 frames, 60 fields a second.
        let progressive = ModeTiming(clockKHz: 74_250, htotal: 2200, vtotal: 1125)
        XCTAssertEqual(try hz(progressive), "30.00")
        XCTAssertEqual(try hz(ModeTiming(clockKHz: 74_250, htotal: 2200, vtotal: 1125, isInterlaced: true)), "60.00")
        // VGA 320x200 line-doubled on 640x400 timings (25.175 MHz, 800x449): 70.09 Hz once, 35.04 doubled.
        XCTAssertEqual(try hz(ModeTiming(clockKHz: 25_175, htotal: 800, vtotal: 449)), "70.09")
        XCTAssertEqual(try hz(ModeTiming(clockKHz: 25_175, htotal: 800, vtotal: 449, isDoubleScan: true)), "35.04")
        XCTAssertEqual(try hz(ModeTiming(clockKHz: 25_175, htotal: 800, vtotal: 449, vscan: 2)), "35.04")
    }

    func testNoTimingsNoRate() {
        XCTAssertNil(ModeTiming(clockKHz: 65_000, htotal: 0, vtotal: 806).refreshRate)
        XCTAssertNil(ModeTiming(clockKHz: 0, htotal: 1344, vtotal: 806).refreshRate)
    }

    func testDisplayModeKeepsTheExactRate() throws {
        let rate = try XCTUnwrap(ModeTiming(clockKHz: 193_250, htotal: 2592, vtotal: 1245).refreshRate)
        let mode = OutputMode(width: 1920, height: 1200, refreshRate: rate)
        XCTAssertEqual(mode.refreshMilliHz, 59_885)
        XCTAssertEqual(mode.exactDescription, "1920x1200@59.88", "two decimals from the exact rate, not from millihertz")
        XCTAssertEqual(mode.description, "1920x1200@60")
        XCTAssertEqual(ModeTiming.formatHz(5.004), "5.00")
        XCTAssertEqual(ModeTiming.formatHz(119.999), "120.00")
    }
}
