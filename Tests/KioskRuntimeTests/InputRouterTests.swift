import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// Input events through the router onto a real stage: hit-testing the laid-out scene, pressed looks on screen,
/// `on_press` actions, keys and the focus ring, rotation, and the touch that wakes the screen.
final class InputRouterTests: XCTestCase {
    static let scene = """
        size: display
        background: "#000000"
        pages:
          - name: main
            widgets:
              - {id: start, type: button, label: Start, x: 20, y: 20, width: 200, height: 100, background: "#4080c0", on_press: {emit: start_pump}}
              - {id: stop, type: button, label: Stop, x: 240, y: 20, width: 200, height: 100, background: "#c04040", on_press: {data: {state: stopped}}}
              - {id: reset, type: button, label: Reset, x: 460, y: 20, width: 200, height: 100, disabled: true, background: "#808080"}
              - {id: next, type: panel, x: 20, y: 300, width: 200, height: 100, background: "#208020", on_press: {page: second, transition: cut}}
              - {id: label, type: text, text: "{state}", x: 300, y: 300, width: 200, height: 60}
          - name: second
            widgets:
              - {id: back, type: button, label: Back, x: 20, y: 20, width: 200, height: 100, on_press: {page: main}}
        """

    var harness: StageHarness!
    var router: InputRouter!
    var reports: [InputReport] = []
    var time: UInt64 = 1_000

    func start(rotation: OutputRotation = .degrees0, idle: IdleSettings? = nil) throws {
        let panel = Size(width: 800, height: 480)
        harness = try StageHarness(yaml: rotation.swapsAxes ? Self.scene.replacingOccurrences(of: "x: 460, y: 20", with: "x: 20, y: 140") : Self.scene,
                                   size: panel, rotation: rotation)
        harness.settle()
        let monitor = idle.map { IdleMonitor(loop: harness.loop, settings: $0) }
        router = InputRouter(stage: harness.stage, mapping: InputMapping(panel: panel, rotation: rotation, output: "DSI-1"), idle: monitor)
        router.onReport = { [unowned self] in reports.append($0) }
    }

    /// A touch event at panel pixel (x, y) of the 800x480 panel.
    func touch(_ kind: String, slot: Int = 0, x: Double = 0, y: Double = 0) {
        time += 10_000
        let position = DevicePosition(x: x / 800, y: y / 480, calibrated: true)
        let event: InputEvent.Kind = switch kind {
        case "down": .touchDown(slot: slot, position: position)
        case "motion": .touchMotion(slot: slot, position: position)
        case "cancel": .touchCancel(slot: slot)
        default: .touchUp(slot: slot)
        }
        router.handle(InputEvent(timeMicroseconds: time, device: "ft5406", kind: event))
    }

    func tap(x: Double, y: Double, slot: Int = 0) {
        touch("down", slot: slot, x: x, y: y)
        touch("up", slot: slot)
    }

    func key(_ name: String, _ code: UInt32, pressed: Bool) {
        time += 10_000
        router.handle(InputEvent(timeMicroseconds: time, device: "keyboard", kind: .key(name: name, code: code, pressed: pressed)))
    }

    func typeKey(_ name: String, _ code: UInt32) {
        key(name, code, pressed: true)
        key(name, code, pressed: false)
    }

    var summary: [String] { reports.map { "\($0.kind.rawValue) \($0.id ?? "-")\($0.action.map { " " + $0 } ?? "")" } }

    func state(_ id: String) throws -> String? { harness.string(try harness.stage.widget(id: id)["state"]) }

    func testATapOnAButtonPressesItAndShowsThePressedLookWhileDown() throws {
        try start()
        let normal = try harness.pixel(x: 30, y: 30)
        touch("down", x: 120, y: 70)
        XCTAssertEqual(try state("start"), "pressed")
        harness.settle()
        let pressed = try harness.pixel(x: 30, y: 30)
        XCTAssertNotEqual(pressed, normal, "the pressed look is on screen while the finger is down")
        touch("up")
        XCTAssertEqual(try state("start"), "normal")
        harness.settle()
        XCTAssertEqual(try harness.pixel(x: 30, y: 30), normal)
        XCTAssertEqual(summary, ["down start", "press start start_pump", "up start"])
        XCTAssertEqual(reports[1].x ?? -1, 120, accuracy: 0.01)
        XCTAssertEqual(reports[1].y ?? -1, 70, accuracy: 0.01)
        XCTAssertEqual(reports[1].timeMicroseconds, time, "the press carries the kernel time of the release")
    }

    func testSlidingOutCancelsAndExtraFingersAreIgnored() throws {
        try start()
        touch("down", slot: 0, x: 120, y: 70)
        touch("down", slot: 1, x: 300, y: 70)
        XCTAssertEqual(try state("stop"), "normal", "a second finger presses nothing")
        touch("up", slot: 1)
        touch("motion", slot: 0, x: 120, y: 200)
        XCTAssertEqual(try state("start"), "normal")
        touch("motion", slot: 0, x: 120, y: 70)
        touch("up", slot: 0)
        XCTAssertEqual(summary, ["down start", "cancel start", "up start"])
        XCTAssertEqual(harness.stage.data(keys: ["state"]), [:], "the stop button was never pressed")
    }

    func testActionsSetDataAndShowPages() throws {
        try start()
        tap(x: 300, y: 70)
        XCTAssertEqual(harness.stage.data(keys: ["state"]), ["state": "stopped"])
        tap(x: 100, y: 350)
        XCTAssertEqual(harness.stage.currentPage, "second")
        harness.settle()
        tap(x: 100, y: 70)
        XCTAssertEqual(harness.stage.currentPage, "main")
        XCTAssertEqual(summary, ["down stop", "press stop", "up stop", "down next", "press next", "up next", "down back", "press back", "up back"])
    }

    func testADisabledButtonTakesNoPress() throws {
        try start()
        tap(x: 500, y: 70)
        XCTAssertEqual(try state("reset"), "disabled")
        XCTAssertEqual(summary, ["down reset", "up -"], "the down reports the widget under the finger; nothing is pressed")
    }

    func testTabMovesFocusAndEnterPresses() throws {
        try start()
        typeKey("tab", 15)
        XCTAssertEqual(router.focusedID, "start")
        typeKey("tab", 15)
        XCTAssertEqual(router.focusedID, "stop", "the disabled reset button and the panel are skipped")
        typeKey("tab", 15)
        XCTAssertEqual(router.focusedID, "start", "wraps around")
        key("leftshift", 42, pressed: true)
        typeKey("tab", 15)
        key("leftshift", 42, pressed: false)
        XCTAssertEqual(router.focusedID, "stop", "Shift-Tab goes back")
        harness.settle()
        // The ring is drawn just outside the focused button (stop is at x 240...440, y 20...120).
        XCTAssertEqual(try harness.pixel(x: 237, y: 70), 0x4cc2ff, "focus ring colour")
        key("enter", 28, pressed: true)
        XCTAssertEqual(try state("stop"), "pressed")
        key("enter", 28, pressed: false)
        typeKey("space", 57)
        XCTAssertEqual(harness.stage.data(keys: ["state"]), ["state": "stopped"])
        XCTAssertEqual(summary.filter { !$0.hasPrefix("key") }, ["down stop", "press stop", "up stop", "down stop", "press stop", "up stop"])
        XCTAssertEqual(reports.filter { $0.kind == .key }.map { $0.key ?? "" },
                       ["tab", "tab", "tab", "leftshift", "tab", "enter", "space"])
    }

    func testRotationPutsTheTouchOnTheWidgetDrawnThere() throws {
        try start(rotation: .degrees90)
        // At 90 the 480x800 scene's top is along the panel's right edge: the start button (scene x 20...220,
        // y 20...120) is drawn at panel x 680...780, y 20...220.
        tap(x: 730, y: 120)
        XCTAssertEqual(summary, ["down start", "press start start_pump", "up start"])
        XCTAssertEqual(reports[1].x ?? -1, 120, accuracy: 0.01)
        XCTAssertEqual(reports[1].y ?? -1, 70, accuracy: 0.01)
        reports = []
        // The same panel position unrotated is nothing at 90.
        tap(x: 120, y: 70)
        XCTAssertEqual(summary, ["down -", "up -"])
    }

    func testTheTouchThatWakesTheScreenIsSwallowed() throws {
        try start(idle: IdleSettings(blankAfter: 30))
        harness.run(for: .seconds(31))
        XCTAssertEqual(router.idle?.state, .blanked)
        touch("down", x: 120, y: 70)
        XCTAssertEqual(router.idle?.state, .active)
        XCTAssertEqual(try state("start"), "normal", "the waking touch shows no pressed look")
        touch("motion", x: 121, y: 71)
        touch("up")
        XCTAssertEqual(summary, [], "the waking touch reaches no widget and reports nothing")
        XCTAssertEqual(router.swallowedCount, 1)
        tap(x: 120, y: 70)
        XCTAssertEqual(summary, ["down start", "press start start_pump", "up start"], "the next touch presses")
    }
}
