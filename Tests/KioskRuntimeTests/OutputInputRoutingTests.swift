import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// Input on several outputs: a device goes to the output its `input.map` rule names, else to the first; a touch on
/// output B hit-tests B's scene and its reports come from B's router.
final class OutputInputRoutingTests: XCTestCase {
    /// The same layout on both outputs, with different ids: a press names the output's scene it landed in.
    static func scene(_ prefix: String) -> String {
        """
        size: display
        background: "#000000"
        pages:
          - name: main
            widgets:
              - {id: \(prefix)-left, type: button, label: L, x: 0, y: 0, width: 200, height: 240, on_press: {emit: \(prefix)-left}}
              - {id: \(prefix)-right, type: button, label: R, x: 200, y: 0, width: 200, height: 240, on_press: {emit: \(prefix)-right}}
        """
    }

    var harnesses: [StageHarness] = []
    var routing: OutputInputRouting!
    var reports: [String] = []
    var time: UInt64 = 1_000

    override func setUpWithError() throws {
        let panel = Size(width: 400, height: 240)
        harnesses = [try StageHarness(yaml: Self.scene("a"), size: panel), try StageHarness(yaml: Self.scene("b"), size: panel)]
        for harness in harnesses { harness.settle() }
        let routers = zip(harnesses, ["HDMI-A-1", "HDMI-A-2"]).map { harness, output in
            let router = InputRouter(stage: harness.stage, mapping: InputMapping(panel: panel, rotation: .degrees0, output: output))
            router.onReport = { [unowned self, unowned router] report in
                reports.append("\(router.mapping.output) \(report.kind.rawValue) \(report.id ?? "-")")
            }
            return router
        }
        routing = OutputInputRouting(routers: routers, deviceRules: InputDeviceRules(rules: [
            InputDeviceRule(device: "Second Panel*", output: "hdmi-a-2"),
            InputDeviceRule(device: "Ghost*", output: "DSI-1"),
        ]))
    }

    func tap(_ device: String, x: Double, y: Double) {
        let position = DevicePosition(x: x / 400, y: y / 240, calibrated: true)
        time += 10_000
        routing.handle(InputEvent(timeMicroseconds: time, device: device, kind: .touchDown(slot: 0, position: position)))
        time += 10_000
        routing.handle(InputEvent(timeMicroseconds: time, device: device, kind: .touchUp(slot: 0)))
    }

    func testADeviceMappedToTheSecondOutputPressesTheSecondOutputsScene() {
        tap("Second Panel Touchscreen", x: 300, y: 100)
        XCTAssertEqual(reports, ["HDMI-A-2 down b-right", "HDMI-A-2 press b-right", "HDMI-A-2 up b-right"])
        XCTAssertTrue(routing.router(forDevice: "Second Panel Touchscreen") === routing.routers[1])
    }

    func testUnmappedDevicesAndDevicesMappedToAnOutputNotDrivenGoToTheFirst() {
        tap("ft5406_ts", x: 50, y: 100)
        tap("Ghost Touch", x: 300, y: 100)
        XCTAssertEqual(reports, ["HDMI-A-1 down a-left", "HDMI-A-1 press a-left", "HDMI-A-1 up a-left",
                                 "HDMI-A-1 down a-right", "HDMI-A-1 press a-right", "HDMI-A-1 up a-right"])
    }

    func testEachOutputKeepsItsOwnPressState() throws {
        // A finger down on each output at once: both are driving contacts, one per output.
        time += 10_000
        routing.handle(InputEvent(timeMicroseconds: time, device: "ft5406_ts",
                                  kind: .touchDown(slot: 0, position: DevicePosition(x: 0.1, y: 0.5, calibrated: true))))
        routing.handle(InputEvent(timeMicroseconds: time, device: "Second Panel Touchscreen",
                                  kind: .touchDown(slot: 0, position: DevicePosition(x: 0.9, y: 0.5, calibrated: true))))
        XCTAssertEqual(reports, ["HDMI-A-1 down a-left", "HDMI-A-2 down b-right"])
        XCTAssertEqual(harnesses[0].string(try harnesses[0].stage.widget(id: "a-left")["state"]), "pressed")
        XCTAssertEqual(harnesses[1].string(try harnesses[1].stage.widget(id: "b-right")["state"]), "pressed")
    }
}
