import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskRuntime
import KioskTestSupport
import KioskVideo
import XCTest

/// A video widget on vkms's overlay planes (enable_overlay=1): GStreamer's frames, scaled to the widget, go onto an
/// overlay plane (`stats` says so and KMS reads back the plane's FB_ID and CRTC_ID) and the compositor leaves them
/// out; the writeback capture equals the headless composite of the same frame. With a widget over it the video is
/// composited, and the capture is still right. The frame is made the same in both runs by pausing the clip and
/// seeking, paused, to a chosen time: the frame GStreamer prerolls there is the one shown.
final class VideoPlaneDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// The video at 1.5x the clip's size, away from the screen's edges, and a widget beside it.
    static func scene(clip: String, overlapped: Bool) -> String {
        var yaml = """
            size: display
            background: "#203040"
            pages:
              - name: main
                widgets:
                  - {id: clip, type: video, source: \(clip), loop: false, fit: contain, x: 40, y: 30, width: 480, height: 360}
                  - {id: side, type: rect, background: "#c0c0c0", x: 600, y: 30, width: 60, height: 60}

            """
        if overlapped {
            yaml += "      - {id: badge, type: rect, background: \"#ffffff\", x: 480, y: 340, width: 80, height: 60}\n"
        }
        return yaml
    }

    private func number(_ state: [String: PropertyValue], _ key: String) -> Double? {
        if case .number(let value)? = state[key] { return value }
        return nil
    }

    /// Plays the clip on `backend` until its first frame is shown, pauses it, seeks to `at` and waits until that
    /// frame is on screen; then presents once more (capturing on DRM) and reads back what it needs.
    private func run(_ yaml: String, on backend: DisplayBackend, name: String, at position: Duration) throws -> PlaneRun {
        let rig = try PlaneRunRig(backend: backend)
        let loop = rig.loop, engine = rig.engine
        let dir = try KioskdProcess.scratchDirectory("drm-video-plane-\(name)")
        let path = dir.appendingPathComponent("scene.yaml")
        try yaml.write(to: path, atomically: true, encoding: .utf8)
        let stage = try SceneStage(engine: engine, path: path.path, clock: { WallTime(seconds: 1_700_000_000) })
        defer { withExtendedLifetime(stage) {} }
        stage.videoPlayers = try GStreamerVideo(loop: loop)
        try engine.start()
        defer { engine.stop() }
        func state() -> [String: PropertyValue] { (try? stage.videoState(id: "clip")) ?? [:] }
        func shown() -> Double { number(state(), "frames_shown") ?? 0 }
        func settled() -> Bool {
            engine.rendersInFlight == 0 && !engine.hasPendingWork && !engine.isAnimating && !backend.isFlipPending
        }
        // An emulated machine takes a while to start GStreamer.
        XCTAssertTrue(loop.spin(seconds: 120) { shown() > 0 }, "the clip never showed a frame: \(state())")
        try stage.pauseVideo(id: "clip")
        XCTAssertTrue(loop.spin(seconds: 60) { settled() }, "the paused clip never settled: \(state())")
        let before = shown()
        try stage.seekVideo(id: "clip", to: position)
        let target = Double(position.components.seconds) + Double(position.components.attoseconds) * 1e-18
        XCTAssertTrue(loop.spin(seconds: 120) {
            shown() > before && abs((number(state(), "position") ?? -1) - target) < 0.02 && settled()
        }, "the frame at \(position) was never shown: \(state())")
        var result = try rig.finish()
        if case .string(let error)? = state()["error"] { XCTFail("video error: \(error)") }
        result.videoState = state().filter { ["position", "frames_decoded", "frames_shown", "frames_dropped"].contains($0.key) }
            .sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return result
    }

    private func assertCaptureEqualsHeadless(overlapped: Bool, file: StaticString = #filePath, line: UInt = #line) throws -> PlaneRun {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 30)
        let yaml = Self.scene(clip: clip, overlapped: overlapped)
        let at = Duration.milliseconds(500)
        let drm = try DRMBackend(options: DRMOptions(commit: .atomic))
        let onDevice = try run(yaml, on: drm, name: overlapped ? "overlapped-drm" : "drm", at: at)
        let headless = try run(yaml, on: try HeadlessBackend(mode: drm.info.mode), name: overlapped ? "overlapped-headless" : "headless", at: at)
        let size = drm.info.mode.size, rowBytes = size.width * 4
        let captured = try XCTUnwrap(onDevice.captured, file: file, line: line)
        let diff = compareImages(captured, headless.shown, size: size, strideA: rowBytes, strideB: rowBytes, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "writeback vs headless composite of the same frame: \(diff); video on the device: "
                       + "\(onDevice.videoState); headless: \(headless.videoState)", file: file, line: line)
        let reason = overlapped ? "overlapped by badge" : "no overlay planes"
        XCTAssertEqual(headless.paths, [LayerPathReport(layer: "clip.body", path: .composited, reason: reason)],
                       file: file, line: line)
        // The capture shows the clip (its colour bars) in the widget's rectangle, not the placeholder.
        var colours = Set<UInt32>()
        for y in stride(from: 40, to: 380, by: 12) {
            for x in stride(from: 50, to: 510, by: 12) { colours.insert(PlaneRun.pixel(captured, x: x, y: y, width: size.width)) }
        }
        XCTAssertGreaterThan(colours.count, 6, "the capture shows the clip's colour bars", file: file, line: line)
        return onDevice
    }

    func testAVideoGoesOnAnOverlayPlaneAndTheCaptureEqualsTheHeadlessComposite() throws {
        let onDevice = try assertCaptureEqualsHeadless(overlapped: false)
        XCTAssertEqual(onDevice.paths, [LayerPathReport(layer: "clip.body", path: .plane)])
        let state = try XCTUnwrap(onDevice.planeState)
        XCTAssertEqual(state.crtc, onDevice.crtc, "the overlay plane is on the CRTC")
        XCTAssertNotNil(onDevice.planeFramebuffer)
        XCTAssertEqual(state.framebuffer, onDevice.planeFramebuffer, "KMS shows the plane's buffer")
        XCTAssertEqual(PlaneRun.pixel(onDevice.shown, x: 200, y: 200, width: onDevice.width), 0x203040,
                       "the primary plane's buffer has the background there: the compositor left the video out")
    }

    func testAnOverlappedVideoIsCompositedAndTheCaptureIsStillRight() throws {
        let onDevice = try assertCaptureEqualsHeadless(overlapped: true)
        XCTAssertEqual(onDevice.paths.map(\.path), [.composited])
        XCTAssertEqual(onDevice.paths.first?.reason.map { $0.hasPrefix("overlapped by badge") }, true, "\(onDevice.paths)")
        XCTAssertNil(onDevice.planeState?.crtc ?? nil, "the overlay plane is off")
        XCTAssertNotEqual(PlaneRun.pixel(onDevice.shown, x: 200, y: 200, width: onDevice.width), 0x203040,
                          "the primary plane's buffer has the video composited into it")
    }
}
