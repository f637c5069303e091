import Foundation
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// The control socket's `screenshot` is the frame on screen, not a re-render: for a still scene (every frame
/// after the first render is the same), the screenshot taken during the run equals the writeback capture of the
/// run's last frame, pixel for pixel. And `display.verify` reads a frame back through vkms' writeback connector
/// and finds it equal to the composed frame of the same present, while an animation flips every vblank; with the
/// corruption hook it reports `scanout_mismatch` and saves both images under the state directory.
final class ControlScreenshotDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// The run's length: its last frame is captured, so the test waits it out. The scene was still, and the
    /// screenshot taken, by frame 67 and 85 in two runs of a debug build under TCG (measured); 360 frames leave four
    /// times that.
    static let frames = 360

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
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--scene", scene.path, "--frames", "\(Self.frames)", "--capture", capture.path,
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
        print("control screenshot: taken after \(try daemon.framesFlipped()) of the run's \(Self.frames) frames")
        XCTAssertEqual(result["width"] as? Int, 1024)
        XCTAssertEqual(try daemon.result("stats")["frames_composed"] as? Int, composed, "nothing was composed up to the screenshot: the scene is still")
        let run = daemon.waitForExit(timeout: 300)
        XCTAssertEqual(run.status, 0, run.stderr)
        let a = try readPNG(path: capture.path), b = try readPNG(path: shot.path)
        XCTAssertEqual(a.size, b.size)
        let diff = compareImages(a.pixels, b.pixels, size: a.size, strideA: a.stride, strideB: b.stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
    }

    func testDisplayVerifyMatchesAndTheCorruptionHookReportsAScanoutMismatch() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-display-verify")
        let scene = dir.appendingPathComponent("moving.yaml"), state = dir.appendingPathComponent("state")
        // Rectangles alone (no text, whose fonts load slowly in the VM); a long animation keeps frames flipping.
        try """
        size: display
        background: "#102030"
        pages:
          - name: moving
            widgets:
              - {id: panel, type: rect, x: 10%, y: 10%, width: 50%, height: 30%, background: "#e0a040"}
              - {id: bar, type: rect, x: 0, y: 60%, width: 20%, height: 20%, background: "#40a0e0"}
        """.write(to: scene, atomically: true, encoding: .utf8)
        // 640x480 rather than vkms' 1024x768: less to compare and encode, which the VM's emulated CPU pays for.
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--mode", "640x480", "--scene", scene.path, "--verify-corrupt-composed"],
                                          environment: ["STATE_DIRECTORY": state.path], readyTimeout: 120)
        defer { _ = daemon.stop() }
        XCTAssertEqual((try daemon.result("stats")["verify"] as? [String: Any])?["verifications"] as? Int, 0)
        // The bar crosses the screen for a minute, a frame every vblank.
        _ = try daemon.result("animate", #"{"id": "bar", "property": "x", "to": 500, "kind": "basic", "duration": 60}"#)
        let flipping = try daemon.framesFlipped()
        try Poll.until("the animation to flip", timeout: 60, interval: 0.1) { try daemon.framesFlipped() > flipping + 10 }

        // Missed vblanks over the same number of flips without and with verifications, side by side.
        func missedAndFlipped() throws -> (missed: Int, flipped: Int) {
            let stats = try daemon.result("stats")
            return (stats["missed_vblanks"] as? Int ?? -1, stats["frames_flipped"] as? Int ?? -1)
        }
        let verifications = 3
        let start = try missedAndFlipped()
        for _ in 0..<verifications {
            let result = try daemon.result("display.verify")
            XCTAssertEqual(result["result"] as? String, "matched", "\(result)")
            XCTAssertEqual(result["width"] as? Int, 640)
            XCTAssertEqual(result["pixels_differing"] as? Int, 0, "\(result)")
            XCTAssertNotNil(result["frame"] as? Int)
        }
        let verified = try missedAndFlipped()
        let flips = verified.flipped - start.flipped
        try Poll.until("as many flips without verification", timeout: 60, interval: 0.1) { try daemon.framesFlipped() >= verified.flipped + flips }
        let baseline = try missedAndFlipped()
        print("display.verify on vkms (\(ProcessInfo.processInfo.environment["KIOSKD_VM_ACCEL"] ?? "host")): \(verifications) verifications, "
              + "\(verified.missed - start.missed) missed vblanks over \(flips) flips; without verification "
              + "\(baseline.missed - verified.missed) missed vblanks over \(baseline.flipped - verified.flipped) flips")
        let verify = try XCTUnwrap(try daemon.result("stats")["verify"] as? [String: Any])
        XCTAssertEqual(verify["verifications"] as? Int, verifications)
        XCTAssertEqual(verify["mismatches"] as? Int, 0)

        let mismatch = try daemon.result("display.verify", #"{"corrupt_composed": true}"#)
        XCTAssertEqual(mismatch["result"] as? String, "mismatch", "\(mismatch)")
        let health = try XCTUnwrap(try daemon.result("stats")["health_reason"] as? String)
        XCTAssertTrue(health.hasPrefix("scanout_mismatch: "), health)
        let images = try XCTUnwrap(mismatch["images"] as? [String: String])
        for kind in ["composed", "scanout"] {
            let path = try XCTUnwrap(images[kind])
            XCTAssertTrue(path.hasPrefix(state.path + "/scanout/Virtual-1-"), path)
            try Poll.until("the \(kind) image", timeout: 30) { FileManager.default.fileExists(atPath: path) }
            let png = try readPNG(path: path)
            XCTAssertEqual([png.size.width, png.size.height], [640, 480])
        }
        // A verification that matches clears the reason.
        XCTAssertEqual(try daemon.result("display.verify")["result"] as? String, "matched")
        XCTAssertFalse((try daemon.result("stats")["health_reason"] as? String ?? "").hasPrefix("scanout_mismatch"))
        let stopped = daemon.stop()
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
    }
}
