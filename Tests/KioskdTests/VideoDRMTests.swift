import Foundation
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// The video widget on a real DRM device (vkms): decoded frames go through the composited path and page flips,
/// and the writeback capture of the last frame equals what kioskd composed for it.
final class VideoDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testAVideoPlaysOnTheCRTCAndTheCaptureEqualsTheComposite() throws {
        // One second, not looping: the clip has ended and its last frame stands still when the last flip is captured,
        // so the capture and the screenshot are of the same frame.
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 30)
        let dir = try KioskdProcess.scratchDirectory("drm-video")
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
        pages:
          - name: main
            widgets:
              - {id: clip, type: video, source: \(clip), loop: false, fit: contain, x: 0, y: 0, width: 100%, height: 100%}
              - {id: label, type: text, text: "video", x: 10, y: 700, width: 300, height: 60, foreground: white}
        """.write(to: scene, atomically: true, encoding: .utf8)
        let capture = dir.appendingPathComponent("capture.png"), shot = dir.appendingPathComponent("shot.png")
        // `--frames` counts flips at 60 Hz from the first present: ten seconds, time for an emulated machine to start
        // GStreamer and play the clip, whose frames are presented as they come.
        let r = try KioskdProcess.run(["run", "--scene", scene.path, "--frames", "600", "--capture", capture.path,
                                       "--screenshot", shot.path], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let a = try readPNG(path: capture.path), b = try readPNG(path: shot.path)
        XCTAssertEqual(a.size, b.size)
        let diff = compareImages(a.pixels, b.pixels, size: a.size, strideA: a.stride, strideB: b.stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
        // The capture shows the clip (its colour bars), not the black placeholder.
        var colours = Set<UInt32>()
        for y in stride(from: 0, to: a.size.height, by: 16) {
            for x in stride(from: 0, to: a.size.width, by: 16) {
                let o = y * a.stride + x * 4
                colours.insert(UInt32(a.pixels[o]) | UInt32(a.pixels[o + 1]) << 8 | UInt32(a.pixels[o + 2]) << 16)
            }
        }
        XCTAssertGreaterThan(colours.count, 6, "the capture shows the clip's colour bars; kioskd said: \(r.stderr.suffix(2000))")
        XCTAssertFalse(r.stderr.contains("video widget clip"), "no video error: \(r.stderr)")
    }
}
