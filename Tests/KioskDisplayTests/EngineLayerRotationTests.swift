import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import XCTest

/// Whether `rects` together cover every pixel of `rect`.
private func covers(_ rects: [Rect], _ rect: Rect) -> Bool {
    pixels(in: rect).isSubset(of: rects.reduce(into: Set<[Int]>()) { $0.formUnion(pixels(in: $1)) })
}

final class EngineLayerRotationTests: XCTestCase {
    /// A 20x10 layer, left half red and right half blue, turned a quarter clockwise about its centre (20, 15):
    /// red on top, blue below, within the turned 10x20 box; the damage covers the old and the new bounding boxes.
    func testQuarterTurnAboutTheCentre() throws {
        let h = try CompositionHarness()
        let layer = h.addLayer("turned", frame: Rect(x: 10, y: 10, width: 20, height: 10), HalvesContent(left: red, right: blue))
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 10, y: 10, width: 10, height: 10)))

        h.presented = []
        layer.transform = LayerTransform(rotation: .pi / 2)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 15, y: 5, width: 10, height: 10)))
        XCTAssertEqual(h.frontPixels(0x0000FF), pixels(in: Rect(x: 15, y: 15, width: 10, height: 10)))
        let damage = h.presented.flatMap { $0 }
        XCTAssertTrue(covers(damage, Rect(x: 10, y: 10, width: 20, height: 10)), "old bounding box damaged: \(damage)")
        XCTAssertTrue(covers(damage, Rect(x: 15, y: 5, width: 10, height: 20)), "new bounding box damaged: \(damage)")
        XCTAssertEqual(h.front(12, 12), 0, "the uncovered corner of the old frame was repainted with the background")
    }

    /// A rotation inherited from the parent turns the child about the parent's centre, and an eighth of a turn
    /// paints inside the bounding box without hiding what is below.
    func testRotationsCompose() throws {
        let h = try CompositionHarness()
        h.addLayer("ground", frame: Rect(x: 0, y: 0, width: 64, height: 48), HalvesContent(green))
        let parent = Layer(frame: Rect(x: 12, y: 4, width: 40, height: 40), name: "parent")
        h.engine.rootLayer.addChild(parent)
        // The child sits in the parent's top-left quarter; turning the parent by half puts it bottom-right.
        let child = h.addLayer("child", frame: Rect(x: 0, y: 0, width: 20, height: 20), HalvesContent(red), to: parent)
        parent.transform = LayerTransform(rotation: .pi)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 32, y: 24, width: 20, height: 20)))

        // Centred in the parent and turned an eighth: a diamond about (32, 24) reaching 14.1 pixels each way.
        child.frame = Rect(x: 10, y: 10, width: 20, height: 20)
        parent.transform = LayerTransform(rotation: .pi / 4)
        h.settle()
        let reds = h.frontPixels(0xFF0000)
        XCTAssertGreaterThan(reds.count, 250, "the inside of a turned 20x20 square")
        XCTAssertLessThanOrEqual(reds.count, 400, "edge pixels are blended, not all red")
        XCTAssertTrue(reds.contains([32, 24]) && reds.contains([32, 12]) && reds.contains([20, 24]))
        XCTAssertEqual(h.front(19, 11), 0x00FF00, "the corner of the bounding box shows the ground below")
        XCTAssertEqual(h.front(44, 36), 0x00FF00)
    }
}
