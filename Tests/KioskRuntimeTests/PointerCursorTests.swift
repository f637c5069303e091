import KioskCore
import KioskRuntime
import XCTest

/// The composited cursor: shown where a mouse moves, left out of hit-testing, hidden a few seconds after the last
/// motion and at once on a touch, never shown for touch alone.
final class PointerCursorTests: XCTestCase {
    var harness: StageHarness!
    var router: InputRouter!
    var reports: [String] = []
    var time: UInt64 = 1_000

    override func setUpWithError() throws {
        let panel = Size(width: 800, height: 480)
        harness = try StageHarness(yaml: InputRouterTests.scene, size: panel)
        harness.settle()
        router = InputRouter(stage: harness.stage, mapping: InputMapping(panel: panel, rotation: .degrees0, output: "DSI-1"))
        router.cursorHideAfter = 3
        router.onReport = { [unowned self] in reports.append("\($0.kind.rawValue) \($0.id ?? "-")") }
    }

    func send(_ kind: InputEvent.Kind, device: String = "mouse") {
        time += 10_000
        router.handle(InputEvent(timeMicroseconds: time, device: device, kind: kind))
    }

    /// The pointer starts at the panel's centre (400, 240).
    func testAMouseShowsTheCursorWhereItIsAndItHidesAfterThreeSeconds() throws {
        XCTAssertNil(router.cursor, "no cursor before a pointer moves")
        XCTAssertEqual(try harness.pixel(x: 503, y: 356), 0x000000)
        send(.pointerMotion(dx: 100, dy: 110))
        harness.settle()
        XCTAssertEqual(router.cursor?.isShown, true)
        // Inside the arrow, just right of its left edge and below its tip (at 500, 350): white.
        XCTAssertEqual(try harness.pixel(x: 503, y: 356), 0xffffff, "the cursor is composited under the pointer")
        harness.run(for: .seconds(2))
        send(.pointerMotion(dx: 0, dy: 0))
        harness.run(for: .seconds(2))
        XCTAssertEqual(router.cursor?.isShown, true, "motion two seconds in starts the three seconds again")
        harness.run(for: .seconds(1.5))
        XCTAssertEqual(router.cursor?.isShown, false)
        XCTAssertEqual(try harness.pixel(x: 503, y: 356), 0x000000, "gone from the screen")
    }

    func testTheCursorCoversNoWidgetAndATouchHidesIt() throws {
        // From the centre to the start button's top-left corner (the button is 20...220 x 20...120).
        send(.pointerMotion(dx: -370, dy: -210))
        harness.settle()
        send(.pointerButton(code: 0x110, pressed: true))
        send(.pointerButton(code: 0x110, pressed: false))
        XCTAssertEqual(reports, ["down start", "press start", "up start"], "the click lands on the button under the cursor")
        XCTAssertEqual(router.cursor?.isShown, true)
        harness.settle()
        XCTAssertEqual(try harness.pixel(x: 33, y: 36), 0xffffff, "the arrow over the button")
        send(.touchDown(slot: 0, position: DevicePosition(x: 0.9, y: 0.9, calibrated: true)), device: "ft5406")
        XCTAssertEqual(router.cursor?.isShown, false, "a touch hides the cursor at once")
        harness.settle()
        XCTAssertEqual(try harness.pixel(x: 33, y: 36), try harness.pixel(x: 60, y: 110), "the button shows no arrow")
    }

    func testTouchAloneNeverMakesACursor() {
        send(.touchDown(slot: 0, position: DevicePosition(x: 0.5, y: 0.5, calibrated: true)), device: "ft5406")
        send(.touchMotion(slot: 0, position: DevicePosition(x: 0.6, y: 0.5, calibrated: true)), device: "ft5406")
        send(.touchUp(slot: 0), device: "ft5406")
        XCTAssertNil(router.cursor)
    }
}
