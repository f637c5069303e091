import KioskCore
import XCTest

/// Which layer is under a point: z-order, transforms, clipping, hidden and transparent layers.
final class HitTestingTests: XCTestCase {
    func makeTree() -> (root: Layer, back: Layer, front: Layer) {
        let root = Layer(frame: Rect(x: 0, y: 0, width: 400, height: 300), name: "root")
        let back = Layer(frame: Rect(x: 50, y: 50, width: 200, height: 100), name: "back")
        let front = Layer(frame: Rect(x: 100, y: 80, width: 100, height: 100), name: "front")
        root.addChild(back)
        root.addChild(front)
        return (root, back, front)
    }

    func testTopmostFirstAndZPositionWins() {
        let (root, back, front) = makeTree()
        XCTAssertTrue(root.hitTest(x: 120, y: 100) === front, "the later sibling is on top")
        XCTAssertTrue(root.hitTest(x: 60, y: 60) === back)
        XCTAssertTrue(root.hitTest(x: 10, y: 10) === root)
        XCTAssertNil(root.hitTest(x: 400, y: 10), "the far edge is outside")
        back.zPosition = 1
        XCTAssertTrue(root.hitTest(x: 120, y: 100) === back, "a higher zPosition is on top")
    }

    func testHiddenAndTransparentLayersAreSkippedWithTheirSubtrees() {
        let (root, back, front) = makeTree()
        let child = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "child")
        front.addChild(child)
        XCTAssertTrue(root.hitTest(x: 105, y: 85) === child)
        front.isHidden = true
        XCTAssertTrue(root.hitTest(x: 105, y: 85) === back)
        front.isHidden = false
        front.opacity = 0
        XCTAssertTrue(root.hitTest(x: 105, y: 85) === back)
        front.opacity = 0.01
        XCTAssertTrue(root.hitTest(x: 105, y: 85) === child)
    }

    /// A layer drawn but not hit-testable (the cursor) lets the point through to what is under it, with its subtree.
    func testALayerThatIsNotHitTestableLetsThePointThrough() {
        let (root, back, front) = makeTree()
        let child = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "child")
        front.addChild(child)
        front.isHitTestable = false
        XCTAssertTrue(root.hitTest(x: 105, y: 85) === back)
        XCTAssertTrue(root.hitTest(x: 150, y: 170) === root, "below back, where only front was")
        front.isHitTestable = true
        XCTAssertTrue(root.hitTest(x: 105, y: 85) === child)
    }

    func testTransformsMoveTheHitArea() {
        let root = Layer(frame: Rect(x: 0, y: 0, width: 400, height: 400), name: "root")
        let box = Layer(frame: Rect(x: 100, y: 100, width: 100, height: 20), name: "box")
        root.addChild(box)
        // Turned a quarter about its centre (150, 110): it now spans x 140...160, y 60...160.
        box.transform = LayerTransform(rotation: .pi / 2)
        XCTAssertTrue(root.hitTest(x: 150, y: 65) === box)
        XCTAssertTrue(root.hitTest(x: 105, y: 110) === root, "the unturned area is no longer the box")
        // Scaled by 2 about its centre: x 50...250, y 90...130 (and moved 100 right).
        box.transform = LayerTransform(translateX: 100, scaleX: 2, scaleY: 2)
        XCTAssertTrue(root.hitTest(x: 345, y: 125) === box)
        XCTAssertTrue(root.hitTest(x: 140, y: 125) === root)
        let child = Layer(frame: Rect(x: 90, y: 0, width: 10, height: 20), name: "child")
        box.addChild(child)
        // The child's local x 90...100 is scaled about the box centre: screen x 330...350 after the move.
        XCTAssertTrue(root.hitTest(x: 345, y: 100) === child)
        XCTAssertTrue(root.hitTest(x: 325, y: 100) === box)
    }

    func testClippingHidesTheSubtreeOutsideTheBounds() {
        let root = Layer(frame: Rect(x: 0, y: 0, width: 400, height: 400), name: "root")
        let clip = Layer(frame: Rect(x: 100, y: 100, width: 50, height: 50), name: "clip")
        let wide = Layer(frame: Rect(x: -50, y: 0, width: 200, height: 20), name: "wide")
        root.addChild(clip)
        clip.addChild(wide)
        XCTAssertTrue(root.hitTest(x: 60, y: 105) === wide, "without clipping the child sticks out")
        clip.clipsToBounds = true
        XCTAssertTrue(root.hitTest(x: 60, y: 105) === root, "clipped away")
        XCTAssertTrue(root.hitTest(x: 110, y: 105) === wide, "inside the clip")
        XCTAssertTrue(root.hitTest(x: 110, y: 130) === clip)
    }

    func testConvertingIntoALayerUndoesItsAncestorsTransforms() throws {
        let root = Layer(frame: Rect(x: 0, y: 0, width: 400, height: 400), name: "root")
        let scaled = Layer(frame: Rect(x: 100, y: 100, width: 100, height: 100), name: "scaled")
        scaled.transform = LayerTransform(scaleX: 2, scaleY: 2)
        root.addChild(scaled)
        let p = try XCTUnwrap(scaled.convertFromTreeRoot(x: 150, y: 150))
        XCTAssertEqual(p.x, 50, accuracy: 1e-9)
        XCTAssertEqual(p.y, 50, accuracy: 1e-9)
        let q = try XCTUnwrap(scaled.convertFromTreeRoot(x: 50, y: 250))
        XCTAssertEqual(q.x, 0, accuracy: 1e-9)
        XCTAssertEqual(q.y, 100, accuracy: 1e-9)
    }
}
