import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskRuntime
import KioskTestSupport
import XCTest

/// The layer engine on a real CRTC: the default scene flips on vblank, and what the CRTC scanned out (writeback)
/// equals the headless render of the same scene state.
final class EngineDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// A still dashboard (no ticker, so nothing moves once rendered): text, a clock, cards, a progress bar, a QR code.
    static let stillDashboard = """
        size: display
        background: {gradient: ["#1a1d26", "#07080c"], angle: 90}
        font: {family: DejaVu Sans, size: 28}
        data: {temp: "21.5", load: "0.4"}
        pages:
          - name: main
            widgets:
              - {type: clock, format: "%H:%M:%S", x: 5%, y: 5%, width: 50%, height: 20%, foreground: white, font: {size: 96}}
              - {type: panel, x: 5%, y: 35%, width: 40%, height: 30%}
              - {type: text, text: "Temperature {temp} °C", x: 7%, y: 40%, width: 36%, height: 10%, foreground: "#ffd040"}
              - {type: progress, value: {bind: load}, x: 5%, y: 75%, width: 90%, height: 4%}
              - {type: qrcode, text: "https://example.com/kiosk", x: 70%, y: 35%, width: 25%, height: 30%}
        """

    /// Builds the still dashboard at a fixed clock on `backend`, runs the engine until the frame with
    /// every layer rendered has been flipped, then presents it once more (capturing on DRM) and returns the
    /// scanout buffer's content.
    private func renderSettledDashboard(backend: DisplayBackend, capture capturer: WritebackCapturer? = nil) throws -> (shown: [UInt8], captured: [UInt8]?) {
        let loop = try MainLoop.epoll()
        let size = backend.info.mode.size
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        let dir = try KioskdProcess.scratchDirectory("drm-still-dashboard")
        let path = dir.appendingPathComponent("scene.yaml")
        try Self.stillDashboard.write(to: path, atomically: true, encoding: .utf8)
        setenv("TZ", "UTC", 1)
        tzset()
        let stage = try SceneStage(engine: engine, path: path.path, clock: { WallTime(seconds: 1_700_000_000) })
        defer { withExtendedLifetime(stage) {} }
        try engine.start()
        defer { engine.stop() }
        let settled = loop.spin(seconds: 60) {
            engine.stats.rendersCompleted > 0 && engine.rendersInFlight == 0 && engine.transaction.pendingRenderCount == 0
                && !engine.hasPendingWork && engine.stats.framesFlipped > 0
        }
        XCTAssertTrue(settled, "the dashboard never settled: \(engine.stats)")
        var captured: [UInt8]?
        if let capturer {
            try capturer.captureNextPresent()
            let flipped = engine.stats.framesFlipped
            engine.redrawEverything()
            XCTAssertTrue(loop.spin(seconds: 30) { engine.stats.framesFlipped > flipped && !backend.isFlipPending })
            captured = try XCTUnwrap(capturer.lastCapture).waitForPixels()
        }
        return (try XCTUnwrap(backend.frontBufferSnapshot()), captured)
    }

    func testWritebackOfTheDashboardEqualsItsHeadlessRender() throws {
        let drm = try DRMBackend(options: DRMOptions(commit: .atomic))
        let onDevice = try renderSettledDashboard(backend: drm, capture: try WritebackCapturer(backend: drm))
        let headless = try renderSettledDashboard(backend: try HeadlessBackend(mode: drm.info.mode))
        let size = drm.info.mode.size, stride = size.width * 4
        let captured = try XCTUnwrap(onDevice.captured)
        let vsShown = compareImages(captured, onDevice.shown, size: size, strideA: stride, strideB: stride, tolerance: 0)
        XCTAssertEqual(vsShown.differingPixels, 0, "writeback vs scanout buffer: \(vsShown)")
        let vsHeadless = compareImages(captured, headless.shown, size: size, strideA: stride, strideB: stride, tolerance: 0)
        XCTAssertEqual(vsHeadless.differingPixels, 0, "writeback vs headless render of the same state: \(vsHeadless)")
        // The comparison can fail: the dashboard is not a flat picture, so a black frame would not match.
        let black = [UInt8](repeating: 0, count: captured.count)
        XCTAssertGreaterThan(compareImages(captured, black, size: size, strideA: stride, strideB: stride, tolerance: 8).differingPixels,
                             size.width * size.height / 2)
    }

    /// The default scene (a dashboard of widgets from scenes/dashboard.yaml) on the real CRTC: every frame flips on
    /// vblank, missed vblanks are reported, and its widgets rendered on workers.
    func testDefaultSceneRunsOnVblank() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-default-scene")
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--mode", "1024x768", "--frames", "300", "--stats-out", stats.path], timeout: 600)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        print("kioskd run (default scene): frames_flipped=\(s["frames_flipped"] ?? "-") missed_vblanks=\(s["missed_vblanks"] ?? "-") renders_completed=\(s["renders_completed"] ?? "-") frames_composed=\(s["frames_composed"] ?? "-") flip_interval_ms=\(s["flip_interval_ms"] ?? "-")")
        XCTAssertEqual(s["frames_flipped"] as? Int, 300)
        XCTAssertNotNil(s["missed_vblanks"] as? Int, "missed_vblanks is reported")
        XCTAssertGreaterThan(s["renders_completed"] as? Int ?? 0, 15, "the scene's widgets rendered on workers")
    }

    func testDashboardRuns600FramesOnVblank() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-dashboard")
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--scene", "default", "--mode", "1024x768", "--frames", "600",
                                       "--stats-out", stats.path], timeout: 600)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        print("kioskd run --scene default: frames_flipped=\(s["frames_flipped"] ?? "-") missed_vblanks=\(s["missed_vblanks"] ?? "-") renders_completed=\(s["renders_completed"] ?? "-") bytes_copied_per_frame=\(s["bytes_copied_per_frame"] ?? "-") flip_interval_ms=\(s["flip_interval_ms"] ?? "-")")
        XCTAssertEqual(s["frames_flipped"] as? Int, 600)
        XCTAssertEqual(s["mode"] as? String, "1024x768@60")
        XCTAssertNotNil(s["missed_vblanks"] as? Int, "missed_vblanks is reported")
        XCTAssertGreaterThan(s["renders_completed"] as? Int ?? 0, 20, "the dashboard's layers rendered on workers")
        let bytes = try XCTUnwrap(s["bytes_copied_per_frame"] as? [String: Any])
        XCTAssertLessThan(bytes["p50"] as? Int ?? .max, 1024 * 768 * 4 / 4, "a typical frame copies only its damage")
    }
}
