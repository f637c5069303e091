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

/// The control socket's `screenshot` is the frame on screen, not a re-render: for a still scene (every frame
/// after the first render is the same), the screenshot taken during the run equals the writeback capture of the
/// run's last frame, pixel for pixel.
final class ControlScreenshotDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testScreenshotEqualsTheWritebackCapture() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-control-screenshot")
        let scene = dir.appendingPathComponent("still.yaml")
        try """
        size: display
        background: "#102030"
        pages:
          - name: still
            widgets:
              - {id: panel, type: rect, x: 10%, y: 10%, width: 50%, height: 30%, background: "#e0a040", corner_radius: 24}
              - {id: label, type: text, text: "kioskd screenshot", x: 10%, y: 50%, width: 80%, height: 20%, foreground: white, font: {size: 48}}
        """.write(to: scene, atomically: true, encoding: .utf8)
        let capture = dir.appendingPathComponent("capture.png"), shot = dir.appendingPathComponent("shot.png")
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--scene", scene.path, "--frames", "900", "--capture", capture.path,
                                           "--screenshot-dir", KioskdProcess.scratchRoot],
                                          readyTimeout: 120)
        // Past the first render (under TCG fonts load slowly, so flips alone say nothing): every render dispatched
        // has come back and no frame was composed for half a second. No event reports that, so `stats` is polled.
        var composed: Int?
        try waitByPolling(for: "every render back and no frame composed for 0.5 s", timeout: 120, interval: 0.5) {
            let stats = try daemon.result("stats")
            let started = stats["renders_started"] as? Int ?? 0
            let completed = stats["renders_completed"] as? Int ?? -1
            let now = stats["frames_composed"] as? Int
            defer { composed = now }
            return started > 0 && started == completed && now != nil && now == composed
        }
        let result = try daemon.result("screenshot", #"{"path": "\#(shot.path)"}"#)
        XCTAssertEqual(result["width"] as? Int, 1024)
        XCTAssertEqual(try daemon.result("stats")["frames_composed"] as? Int, composed, "nothing was composed up to the screenshot: the scene is still")
        let run = daemon.waitForExit(timeout: 300)
        XCTAssertEqual(run.status, 0, run.stderr)
        let a = try readPNG(path: capture.path), b = try readPNG(path: shot.path)
        XCTAssertEqual(a.size, b.size)
        let diff = compareImages(a.pixels, b.pixels, size: a.size, strideA: a.stride, strideB: b.stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
    }
}
