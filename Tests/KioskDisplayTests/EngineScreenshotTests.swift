import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

final class EngineScreenshotTests: XCTestCase {
    /// The screenshot is the front buffer: after the last presented frame has flipped it equals the compositor's
    /// composition of that frame, at every rotation (in panel coordinates).
    func testScreenshotEqualsTheCompositionOfTheLastPresentedFrame() throws {
        for rotation in OutputRotation.allCases {
            let h = try CompositionHarness(rotation: rotation)
            h.addLayer("a", frame: Rect(x: 2, y: 3, width: 20, height: 10), HalvesContent(left: red, right: blue))
            let b = h.addLayer("b", frame: Rect(x: 30, y: 20, width: 9, height: 17), HalvesContent(green))
            b.transform = LayerTransform(rotation: 0.3)
            h.settle()
            let shot = try XCTUnwrap(h.engine.screenshot())
            XCTAssertEqual(shot.count, h.panel.width * h.panel.height * 4)
            let composed = h.compositor.snapshot()
            let diff = compareImages(shot, composed, size: h.panel, strideA: h.panel.width * 4, strideB: h.panel.width * 4, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "\(rotation)°: \(diff)")
            XCTAssertGreaterThan(h.frontPixels(0xFF0000).count, 90, "\(rotation)°: the frame is not empty")
        }
    }
}
