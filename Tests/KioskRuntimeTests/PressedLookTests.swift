import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// A button's pressed look is rendered ahead, beside its resting look: a press or release swaps which finished
/// surface is composited and renders nothing, so the frame committed in the same loop turn as the input event
/// shows it. The pixels are those of the pressed look drawn by `widget.set {state: pressed}`.
final class PressedLookTests: XCTestCase {
    var harness: StageHarness!
    var router: InputRouter!
    var time: UInt64 = 1_000
    /// The start button's rectangle on the 800x480 panel.
    let button = Rect(x: 20, y: 20, width: 200, height: 100)

    override func setUpWithError() throws {
        let panel = Size(width: 800, height: 480)
        harness = try StageHarness(yaml: InputRouterTests.scene, size: panel)
        harness.settle()
        router = InputRouter(stage: harness.stage, mapping: InputMapping(panel: panel, rotation: .degrees0, output: "DSI-1"), idle: nil)
    }

    func touch(_ down: Bool) {
        time += 10_000
        let kind: InputEvent.Kind = down ? .touchDown(slot: 0, position: DevicePosition(x: 120.0 / 800, y: 70.0 / 480, calibrated: true))
            : .touchUp(slot: 0)
        router.handle(InputEvent(timeMicroseconds: time, device: "ft5406", kind: kind))
    }

    /// The button's pixels on screen, row by row.
    func buttonPixels() throws -> [UInt32] {
        var pixels: [UInt32] = []
        for y in button.y..<(button.y + button.height) {
            for x in button.x..<(button.x + button.width) { pixels.append(try harness.pixel(x: x, y: y)) }
        }
        return pixels
    }

    /// One loop turn at the current instant, then the flip of what it committed.
    func turnAndFlip() {
        harness.loop.runOnce(timeout: .zero)
        harness.run(for: harness.backend.info.mode.frameDuration)
    }

    func testAPressIsCommittedInTheSameTurnWithoutARender() throws {
        // Every scanout buffer is copied whole once, the first time it is used; a few taps use them all.
        for _ in 0..<3 {
            touch(true)
            turnAndFlip()
            touch(false)
            turnAndFlip()
        }
        let normal = try buttonPixels()
        let renders = harness.stats.rendersStarted
        let presented = harness.stats.framesPresented
        var copied: [[Rect]] = []
        harness.listeners.append(harness.engine.addPresentListener { copied.append($0) })
        touch(true)
        XCTAssertEqual(harness.engine.rendersInFlight, 0, "the press queued no render")
        harness.loop.runOnce(timeout: .zero)
        XCTAssertEqual(harness.stats.framesPresented, presented + 1, "the loop turn that had the touch-down committed a frame")
        XCTAssertEqual(copied.count, 1)
        for rect in copied.first ?? [] {
            XCTAssertEqual(rect.intersection(button), rect, "the commit copies the button's rectangle only, not \(rect)")
        }
        harness.run(for: harness.backend.info.mode.frameDuration)
        let pressed = try buttonPixels()
        XCTAssertNotEqual(pressed, normal, "the committed frame shows the pressed look")
        XCTAssertEqual(harness.stats.rendersStarted, renders, "no render for the press")

        touch(false)
        turnAndFlip()
        XCTAssertEqual(try buttonPixels(), normal, "the release restores the resting look")
        XCTAssertEqual(harness.stats.rendersStarted, renders, "no render for the release")
    }

    func testThePressedLookEqualsTheRenderedPressedState() throws {
        touch(true)
        turnAndFlip()
        let swapped = try buttonPixels()
        touch(false)
        turnAndFlip()
        try harness.setWidget(id: "start", properties: ["state": .string("pressed")])
        harness.settle()
        XCTAssertEqual(try buttonPixels(), swapped, "the pre-rendered pressed look is the look the pressed state draws")
    }

    func testWidgetSetRerendersBothLooks() throws {
        try harness.setWidget(id: "start", properties: ["label": .string("Go"), "background": .string("#20a040")])
        harness.settle()
        let normal = try buttonPixels()
        let renders = harness.stats.rendersStarted
        touch(true)
        turnAndFlip()
        let pressed = try buttonPixels()
        XCTAssertEqual(harness.stats.rendersStarted, renders, "the new pressed look was rendered with the change")
        touch(false)
        turnAndFlip()
        try harness.setWidget(id: "start", properties: ["state": .string("pressed")])
        harness.settle()
        XCTAssertEqual(try buttonPixels(), pressed, "the pressed look follows widget.set")
        XCTAssertNotEqual(pressed, normal)
    }

    func testADisabledButtonKeepsNoPressedSurfaceAndShowsItsDisabledLook() throws {
        let stage = harness.stage
        XCTAssertNotNil(TapLayers.find("reset.body", in: harness.engine.rootLayer))
        XCTAssertNil(TapLayers.find("reset.pressed", in: harness.engine.rootLayer), "a disabled button takes no presses")
        XCTAssertNotNil(TapLayers.find("start.pressed", in: harness.engine.rootLayer))
        try harness.setWidget(id: "start", properties: ["enabled": .bool(false)])
        harness.settle()
        XCTAssertNil(TapLayers.find("start.pressed", in: harness.engine.rootLayer), "disabling drops the pressed surface")
        XCTAssertEqual(harness.string(try stage.widget(id: "start")["state"]), "disabled")
        let disabled = try buttonPixels()
        touch(true)
        turnAndFlip()
        XCTAssertEqual(try buttonPixels(), disabled, "a disabled button shows no pressed look")
        touch(false)
        try harness.setWidget(id: "start", properties: ["enabled": .bool(true)])
        harness.settle()
        XCTAssertNotNil(TapLayers.find("start.pressed", in: harness.engine.rootLayer))
        XCTAssertNotEqual(try buttonPixels(), disabled)
    }
}

/// Finds layers by name in a tree.
enum TapLayers {
    static func find(_ name: String, in root: Layer) -> Layer? {
        if root.name == name { return root }
        for child in root.children { if let found = find(name, in: child) { return found } }
        return nil
    }
}
