import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskRuntime
import KioskTestSupport
import XCTest

/// Overlay planes on vkms (enable_overlay=1): a `plane: true` image goes on an overlay plane (`stats` says so, and
/// KMS reads back the plane's FB_ID and CRTC_ID), the compositor leaves its pixels out, and the writeback capture
/// (vkms blends the planes into it) equals the headless composite of the same scene. With a widget over it, it is
/// composited instead, and the capture is still right.
final class OverlayPlaneDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// Left half orange, right half teal: opaque, with a seam, so a misplaced or mirrored plane shows.
    static let poster = """
        <svg xmlns="http://www.w3.org/2000/svg" width="200" height="120">\
        <rect width="100" height="120" fill="#ff8000"/><rect x="100" width="100" height="120" fill="#008080"/></svg>
        """

    static func scene(overlapped: Bool) -> String {
        var yaml = """
            size: display
            background: "#203040"
            pages:
              - name: main
                widgets:
                  - {id: poster, type: image, path: poster.svg, fit: fill, plane: true, x: 40, y: 30, width: 200, height: 120}
                  - {id: side, type: rect, background: "#c0c0c0", x: 300, y: 30, width: 60, height: 60}

            """
        if overlapped {
            yaml += "      - {id: badge, type: rect, background: \"#ffffff\", x: 200, y: 120, width: 80, height: 60}\n"
        }
        return yaml
    }

    /// Shows the scene on `backend` until every layer rendered and the frame flipped, then presents once more
    /// (capturing on DRM) and reads back what it needs.
    private func run(_ yaml: String, on backend: DisplayBackend, name: String) throws -> PlaneRun {
        let rig = try PlaneRunRig(backend: backend)
        let loop = rig.loop, engine = rig.engine
        let dir = try KioskdProcess.scratchDirectory("drm-overlay-\(name)")
        try Self.poster.write(to: dir.appendingPathComponent("poster.svg"), atomically: true, encoding: .utf8)
        let path = dir.appendingPathComponent("scene.yaml")
        try yaml.write(to: path, atomically: true, encoding: .utf8)
        let stage = try SceneStage(engine: engine, path: path.path, clock: { WallTime(seconds: 1_700_000_000) })
        defer { withExtendedLifetime(stage) {} }
        try engine.start()
        defer { engine.stop() }
        let settled = loop.spin(seconds: 60) {
            engine.stats.rendersCompleted > 0 && engine.rendersInFlight == 0 && engine.transaction.pendingRenderCount == 0
                && !engine.hasPendingWork && engine.stats.framesFlipped > 0
        }
        XCTAssertTrue(settled, "the scene never settled: \(engine.stats)")
        return try rig.finish()
    }

    private func assertCaptureEqualsHeadless(overlapped: Bool, file: StaticString = #filePath, line: UInt = #line) throws -> (PlaneRun, PlaneRun) {
        let yaml = Self.scene(overlapped: overlapped)
        let drm = try DRMBackend(options: DRMOptions(commit: .atomic))
        let onDevice = try run(yaml, on: drm, name: overlapped ? "overlapped-drm" : "drm")
        let headless = try run(yaml, on: try HeadlessBackend(mode: drm.info.mode), name: overlapped ? "overlapped-headless" : "headless")
        let size = drm.info.mode.size, stride = size.width * 4
        let captured = try XCTUnwrap(onDevice.captured, file: file, line: line)
        let diff = compareImages(captured, headless.shown, size: size, strideA: stride, strideB: stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "writeback vs headless composite of the same scene: \(diff)", file: file, line: line)
        let reason = overlapped ? "overlapped by badge" : "no overlay planes"
        XCTAssertEqual(headless.paths, [LayerPathReport(layer: "poster.body", path: .composited, reason: reason)],
                       file: file, line: line)
        return (onDevice, headless)
    }

    func testAPlaneImageGoesOnAnOverlayPlaneAndTheCaptureEqualsTheHeadlessComposite() throws {
        let (onDevice, _) = try assertCaptureEqualsHeadless(overlapped: false)
        XCTAssertEqual(onDevice.paths, [LayerPathReport(layer: "poster.body", path: .plane)])
        let state = try XCTUnwrap(onDevice.planeState)
        XCTAssertEqual(state.crtc, onDevice.crtc, "the overlay plane is on the CRTC")
        XCTAssertNotNil(onDevice.planeFramebuffer)
        XCTAssertEqual(state.framebuffer, onDevice.planeFramebuffer, "KMS shows the plane's buffer")
        let captured = try XCTUnwrap(onDevice.captured)
        XCTAssertEqual(PlaneRun.pixel(captured, x: 60, y: 50, width: onDevice.width), 0xff8000, "the plane's left half, on the CRTC")
        XCTAssertEqual(PlaneRun.pixel(captured, x: 220, y: 50, width: onDevice.width), 0x008080, "and its right half")
        XCTAssertEqual(PlaneRun.pixel(onDevice.shown, x: 60, y: 50, width: onDevice.width), 0x203040,
                       "the primary plane's buffer has the background there: the compositor left the image out")
    }

    func testAnOverlappedImageIsCompositedAndTheCaptureIsStillRight() throws {
        let (onDevice, _) = try assertCaptureEqualsHeadless(overlapped: true)
        XCTAssertEqual(onDevice.paths.map(\.path), [.composited])
        XCTAssertEqual(onDevice.paths.first?.reason.map { $0.hasPrefix("overlapped by badge") }, true, "\(onDevice.paths)")
        XCTAssertNil(onDevice.planeState?.crtc ?? nil, "the overlay plane is off")
    }
}
