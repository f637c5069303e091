import CDRM
import Foundation
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// Board files on the real device: the vkms board picks the card by driver name.
final class BoardFileDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testVkmsBoardFileDrivesVirtual1() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = try KioskdProcess.scratchDirectory("drm-board")
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--board", repo.appendingPathComponent("board-configs/vkms.yaml").path,
                                       "--frames", "10", "--stats-out", stats.path], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["driver"] as? String, "vkms")
        XCTAssertEqual(s["connector"] as? String, "Virtual-1")
        XCTAssertEqual(s["frames_flipped"] as? Int, 10)
    }

    func testUnknownDriverListsWhatWasFound() throws {
        let r = try KioskdProcess.run(["run", "--driver", "vc4", "--frames", "1"])
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.errorLines.count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("no DRM device with driver vc4") && r.stderr.contains("/dev/dri/card0 (driver vkms)"), r.stderr)
    }
}
