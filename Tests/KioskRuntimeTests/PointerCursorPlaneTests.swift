import Foundation
import KioskCore
import KioskRender
import KioskRuntime
import KioskTestSupport
import XCTest

/// A cursor plane records what the cursor asks of it. Main thread.
final class RecordingCursorPlane: CursorPlane {
    var name: String { "plane 99" }
    var maximumImageSize = Size(width: 64, height: 64)
    var isUsable = true
    private(set) var image: CursorImage?
    /// Every placement, nil for hidden.
    private(set) var placements: [(x: Int, y: Int)?] = []

    func setImage(_ image: CursorImage) throws {
        guard image.size.width <= maximumImageSize.width, image.size.height <= maximumImageSize.height else {
            throw OutputError("cursor \(name): image \(image.size) is too large")
        }
        self.image = image
    }

    func place(at origin: (x: Int, y: Int)?) { placements.append(origin) }
}

/// The cursor on an output's cursor plane: placed under the pointer with a present and nothing composited, hidden
/// after three seconds and at once on a touch; composited where the plane cannot take it.
final class PointerCursorPlaneTests: XCTestCase {
    var harness: StageHarness!
    var router: InputRouter!
    var plane: RecordingCursorPlane!
    var time: UInt64 = 1_000

    func makeRouter(rotation: OutputRotation = .degrees0) throws {
        let panel = Size(width: 800, height: 480)
        harness = try StageHarness(yaml: InputRouterTests.scene, size: panel, rotation: rotation)
        harness.settle()
        plane = RecordingCursorPlane()
        router = InputRouter(stage: harness.stage, mapping: InputMapping(panel: panel, rotation: rotation, output: "DSI-1"))
        router.cursorHideAfter = 3
        router.cursorPlane = plane
    }

    func send(_ kind: InputEvent.Kind, device: String = "mouse") {
        time += 10_000
        router.handle(InputEvent(timeMicroseconds: time, device: device, kind: kind))
    }

    /// Turns the loop until the arrow drawn on the background queue has reached the plane.
    func waitForImage() throws {
        try Poll.until("the arrow to reach the plane", timeout: 10, interval: 0) {
            guard plane.image == nil else { return true }
            harness.loop.runOnce(timeout: .zero)
            if plane.image == nil { sched_yield() }
            return plane.image != nil
        }
    }

    func testTheCursorGoesOnThePlaneWithAPresentAndNothingComposited() throws {
        try makeRouter()
        send(.pointerMotion(dx: 0, dy: 0))
        try waitForImage()
        XCTAssertEqual(router.cursor?.path, .plane)
        XCTAssertEqual(plane.image?.size, CursorContent.size)
        let presented = harness.stats.framesPresented
        // The pointer starts at the panel's centre (400, 240); the arrow's hotspot is its box's corner.
        send(.pointerMotion(dx: 100, dy: 110))
        XCTAssertTrue(plane.placements.last! ?? (0, 0) == (500, 350), "placed at \(plane.placements.last as Any)")
        harness.settle()
        XCTAssertGreaterThan(harness.stats.framesPresented, presented, "the move went out with a present")
        XCTAssertEqual(router.cursor?.isShown, true)
        XCTAssertEqual(try harness.pixel(x: 503, y: 356), 0x000000, "nothing composited under the pointer")

        harness.run(for: .seconds(3.5))
        XCTAssertEqual(router.cursor?.isShown, false)
        XCTAssertTrue(plane.placements.last! == nil, "hidden three seconds after the last motion")

        send(.pointerMotion(dx: 1, dy: 0))
        XCTAssertTrue(plane.placements.last! ?? (0, 0) == (501, 350))
        send(.touchDown(slot: 0, position: DevicePosition(x: 0.9, y: 0.9, calibrated: true)), device: "ft5406")
        XCTAssertTrue(plane.placements.last! == nil, "a touch takes it off the plane at once")
        XCTAssertEqual(router.cursor?.isShown, false)
    }

    func testAtNinetyDegreesTheArrowIsTurnedAndItsTipStaysOnThePointer() throws {
        try makeRouter(rotation: .degrees90)
        send(.pointerMotion(dx: 0, dy: 0))
        try waitForImage()
        let image = try XCTUnwrap(plane.image)
        XCTAssertEqual(image.size, Size(width: 24, height: 16), "turned with the scene")
        XCTAssertTrue(image.hotspot == (24, 0), "the tip's corner is the box's top-right on the panel: \(image.hotspot)")
        send(.pointerMotion(dx: 10, dy: 20))
        // The pointer is at panel (410, 260); the image's top-right corner sits there.
        XCTAssertTrue(plane.placements.last! ?? (0, 0) == (386, 260), "placed at \(plane.placements.last as Any)")
    }

    func testAPlaneThatStopsBeingUsableHandsTheCursorToTheCompositor() throws {
        try makeRouter()
        send(.pointerMotion(dx: 0, dy: 0))
        try waitForImage()
        plane.isUsable = false
        send(.pointerMotion(dx: 100, dy: 110))
        XCTAssertEqual(router.cursor?.path, .composited)
        harness.settle()
        XCTAssertEqual(try harness.pixel(x: 503, y: 356), 0xffffff, "composited under the pointer")
    }

    func testRotatingAnImageMovesEveryPixelAndTheHotspot() {
        // 3x2: a b c / d e f.
        let image = CursorImage(size: Size(width: 3, height: 2), pixels: [1, 2, 3, 4, 5, 6], hotspot: (1, 0))
        XCTAssertEqual(image.rotated(.degrees0), image)
        let r90 = image.rotated(.degrees90)
        XCTAssertEqual(r90.size, Size(width: 2, height: 3))
        XCTAssertEqual(r90.pixels, [4, 1, 5, 2, 6, 3], "the left column becomes the top row, read right to left")
        XCTAssertTrue(r90.hotspot == (2, 1))
        let r180 = image.rotated(.degrees180)
        XCTAssertEqual(r180.pixels, [6, 5, 4, 3, 2, 1])
        XCTAssertTrue(r180.hotspot == (2, 2))
        let r270 = image.rotated(.degrees270)
        XCTAssertEqual(r270.pixels, [3, 6, 2, 5, 1, 4])
        XCTAssertTrue(r270.hotspot == (0, 2))
        XCTAssertTrue(r90.origin(forPointerAt: (10.5, 20.9)) == (8, 19))
    }
}
