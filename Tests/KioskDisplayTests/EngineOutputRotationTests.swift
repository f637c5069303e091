import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

final class EngineOutputRotationTests: XCTestCase {
    /// At 90° the tree is laid out portrait; a layer at the scene's top-left lands at the panel's top-right, and
    /// moving it damages and copies exactly the turned rectangles.
    func testPortraitSceneOnALandscapePanel() throws {
        let h = try CompositionHarness(rotation: .degrees90)
        XCTAssertEqual(h.engine.rootLayer.frame, Rect(x: 0, y: 0, width: 48, height: 64), "the root is the scene, portrait")
        let layer = h.addLayer("corner", frame: Rect(x: 0, y: 0, width: 8, height: 6), HalvesContent(red))
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 58, y: 0, width: 6, height: 8)))

        h.presented = []
        layer.frame.origin(x: 20, y: 30)
        h.settle()
        let scene = h.compositor.sceneSize
        let old = OutputRotation.degrees90.panelRect(Rect(x: 0, y: 0, width: 8, height: 6), sceneSize: scene)
        let new = OutputRotation.degrees90.panelRect(Rect(x: 20, y: 30, width: 8, height: 6), sceneSize: scene)
        XCTAssertEqual(new, Rect(x: 28, y: 20, width: 6, height: 8))
        XCTAssertEqual(h.presented.count, 1)
        XCTAssertEqual(Set(h.presented.first ?? []), [old, new], "the present names the turned rectangles")
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: new))
    }
}
