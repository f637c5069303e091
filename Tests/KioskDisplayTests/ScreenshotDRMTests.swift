import CDRM
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// `LayerEngine.screenshot()` on a real CRTC: the front buffer after a completed flip is what the CRTC scanned
/// out for that frame, as writeback captured it (the X byte aside), with and without output rotation.
final class ScreenshotDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testScreenshotEqualsTheWritebackCaptureOfTheSameFrame() throws {
        for rotation in [OutputRotation.degrees0, .degrees90] {
            let loop = try MainLoop.epoll()
            let drm = try DRMBackend(options: DRMOptions(commit: .atomic))
            let capturer = try WritebackCapturer(backend: drm)
            let size = drm.info.mode.size
            let compositor = try ShadowCompositor(size: size, background: Color(rgb: 0x203040), rotation: rotation)
            let engine = try LayerEngine(loop: loop, backend: drm, compositor: compositor,
                                         pool: RenderQueuePool(strategy: .roundRobin, workerCount: 1))
            let corner = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 32), name: "corner")
            corner.backgroundColor = Color(rgb: 0xFF8000)
            engine.rootLayer.addChild(corner)
            let turned = Layer(frame: Rect(x: 200, y: 300, width: 120, height: 40), name: "turned")
            turned.backgroundColor = Color(rgb: 0x00C0FF)
            turned.transform = LayerTransform(rotation: 0.4)
            engine.rootLayer.addChild(turned)
            try engine.start()
            XCTAssertTrue(loop.spin { engine.stats.framesFlipped > 0 && !engine.hasPendingWork }, "\(rotation)°")

            try capturer.captureNextPresent()
            let flipped = engine.stats.framesFlipped
            engine.redrawEverything()
            XCTAssertTrue(loop.spin { engine.stats.framesFlipped > flipped && !drm.isFlipPending }, "\(rotation)°")
            let captured = try XCTUnwrap(capturer.lastCapture).waitForPixels()
            let shot = try XCTUnwrap(engine.screenshot())
            engine.stop()
            let stride = size.width * 4
            let diff = compareImages(captured, shot, size: size, strideA: stride, strideB: stride, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "\(rotation)°: writeback vs screenshot: \(diff)")
            // The scene's top-left corner is on the panel's top-left at 0° and its top-right at 90°.
            let x = rotation == .degrees0 ? 2 : size.width - 3
            let offset = (2 * size.width + x) * 4
            XCTAssertEqual(Array(captured[offset..<offset + 3]), [0x00, 0x80, 0xFF], "\(rotation)°: the scene's corner")
        }
    }
}
