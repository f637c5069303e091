import Foundation
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

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
        try Poll.until("every render back and no frame composed for 0.5 s", timeout: 120, interval: 0.5) {
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
