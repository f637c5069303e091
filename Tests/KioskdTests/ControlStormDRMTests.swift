import Foundation
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// The control-socket storm of `ControlStormTests` against kioskd on the vkms DRM device: real vblank-paced page
/// flips must keep coming while eight clients (over forty connections) send more than 10,000 bad lines.
final class ControlStormDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testStormOnTheDRMBackend() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "drm"], readyTimeout: 120)
        defer { daemon.stop() }
        XCTAssertEqual(try daemon.result("display.info")["driver"] as? String, "vkms")
        // Under TCG a reply can wait long behind the dashboard's renders and thousands of error replies: the
        // storm allows three minutes per reply and thirty seconds between flips here (twenty and two on the host).
        let report = try runStorm(against: daemon, expected: .init(width: 1024, height: 768), rssBoundKiB: 16 * 1024,
                                  replyTimeoutSeconds: 180, flipGapLimit: 30)
        XCTAssertGreaterThanOrEqual(report.malformedSent, 10_000)
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// `display.info` lists the connector's modes from the kernel, and the screenshot is the mode's size.
    func testDisplayInfoModesAndScreenshotOnDRM() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "drm"], readyTimeout: 120)
        defer { daemon.stop() }
        let info = try daemon.result("display.info")
        XCTAssertEqual(info["connector"] as? String, "Virtual-1")
        let modes = try XCTUnwrap(info["modes"] as? [[String: Any]])
        XCTAssertTrue(modes.contains { $0["name"] as? String == "1024x768@60" && $0["preferred"] as? Bool == true }, "\(modes)")
        XCTAssertGreaterThan(modes.count, 1, "vkms offers more than one mode")
        XCTAssertEqual(info["power"] as? String, "on")
        let shot = try daemon.result("screenshot")
        XCTAssertEqual(shot["width"] as? Int, 1024)
        XCTAssertEqual(shot["height"] as? Int, 768)
    }
}
