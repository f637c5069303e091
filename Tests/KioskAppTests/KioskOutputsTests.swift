import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskDisplay
import KioskRuntime
import KioskScene
import KioskTestSupport
import Logging
import XCTest

/// The outputs of a kiosk and the control commands over them, in process: two headless outputs on the manual clock,
/// each with its own scene, and the control socket's command registry called directly.
final class KioskOutputsTests: XCTestCase {
    static let left = "size: display\ndata: {greeting: none}\npages:\n  - name: main\n    widgets:\n      - {id: t, type: text, text: \"{greeting}\", x: 0, y: 0, width: 100%, height: 50%}\n"
    static let right = "size: display\npages:\n  - name: main\n    widgets: []\n  - name: second\n    widgets: []\n"

    private var directory: URL!
    private var loop: MainLoop!
    private let pool = RenderQueuePool(strategy: .manual)
    private var outputs: KioskOutputs!
    private var control: ControlWiring!
    private var socketFolder: String?

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("kiosk-outputs-\(name.filter(\.isLetter))")
        try Self.left.write(to: directory.appendingPathComponent("left.yaml"), atomically: true, encoding: .utf8)
        try Self.right.write(to: directory.appendingPathComponent("right.yaml"), atomically: true, encoding: .utf8)
        (loop, _) = MainLoop.manual()
        let config = [KioskConfig.Output(connector: "HDMI-A-1", mode: ModeRequest(width: 320, height: 240, refreshHz: 60)),
                      KioskConfig.Output(connector: "DP-1", mode: ModeRequest(width: 200, height: 100, refreshHz: 50),
                                         scene: directory.appendingPathComponent("right.yaml").path)]
        let entries = KioskOutputs.entries(config, connector: nil, mode: nil, rotation: .degrees0,
                                           scenePath: directory.appendingPathComponent("left.yaml").path)
        let logger = Logger(label: "test")
        outputs = try KioskOutputs(entries: entries, loop: loop, pool: pool, hotplug: false, source: { entry in
            let m = try XCTUnwrap(entry.mode)
            let source = HeadlessOutputSource(connector: try XCTUnwrap(entry.connector),
                                              mode: OutputMode(width: m.width, height: m.height, refreshMilliHz: m.refreshMilliHz ?? 60_000))
            return (source, try source.probe())
        }, runner: { engine, entry in
            try SceneRunner(engine: engine, path: entry.scenePath, watch: false, fpsOverlay: false, logger: logger)
        }, logger: logger)
        var options = KioskConfig.Control()
        // A socket path must be short: under /tmp rather than the build folder.
        var template = Array("/tmp/kioskapp-XXXXXX".utf8CString)
        let socketDirectory = String(cString: try XCTUnwrap(mkdtemp(&template)))
        socketFolder = socketDirectory
        options.socket = socketDirectory + "/control.sock"
        control = try XCTUnwrap(try ControlWiring.start(options: options, loop: loop, outputs: outputs, logger: logger))
        outputs.start()
    }

    override func tearDown() {
        control?.stop()
        outputs?.stop()
        (control, outputs, loop) = (nil, nil, nil)
        if let socketFolder { try? FileManager.default.removeItem(atPath: socketFolder) }
    }

    /// The reply of `command` as the socket would give it: its result, or its error.
    private func call(_ command: String, _ arguments: [String: JSONValue] = [:]) -> (result: JSONValue?, error: JSONValue?) {
        var reply: JSONValue?
        _ = control.server.commands.start(ControlRequest(command: command, arguments: arguments), from: .remote(number: -1)) { reply = $0 }
        return (reply?["result"], reply?["error"])
    }

    func testAnOutputIsFoundByItsNameInAnyCaseAndAnUnknownNameNamesTheOutputs() throws {
        XCTAssertEqual(outputs.outputs.map(\.name), ["HDMI-A-1", "DP-1"])
        XCTAssertTrue(try outputs.output(named: nil) === outputs.first)
        XCTAssertTrue(try outputs.output(named: "dp-1") === outputs.outputs[1])
        XCTAssertThrowsError(try outputs.output(named: "HDMI-A-2")) {
            XCTAssertEqual("\($0)", "no output named 'HDMI-A-2'; outputs: HDMI-A-1, DP-1")
        }
        let unknown = call("scene.get", ["output": "HDMI-A-2"]).error
        XCTAssertEqual(unknown?["code"], "not_found")
        XCTAssertEqual(unknown?["message"], "scene.get: no output named 'HDMI-A-2'; outputs: HDMI-A-1, DP-1")
    }

    /// Commands are registered only under `ControlCommandName`s, the list `mqtt.allow` is checked against too; the
    /// kiosk answers every one of them.
    func testEveryControlCommandNameHasAHandler() {
        XCTAssertEqual(control.server.commands.commandNames, ControlCommandName.allCases.map(\.rawValue).sorted())
        XCTAssertEqual(MQTTSettings.knownCommands, control.server.commands.commandNames)
        // `version` lists them by every name they answer to, the older output names among them.
        let listed = call("version").result?["commands"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertEqual(listed, ControlCommandName.acceptedNames)
    }

    func testOutputInfoSpeaksOfTheOutputNamedAndListsEveryOutput() throws {
        let first = try XCTUnwrap(call("output.info").result)
        XCTAssertEqual(first["connector"], "HDMI-A-1")
        XCTAssertEqual(first["mode"]?["name"], "320x240@60")
        let named = try XCTUnwrap(call("output.info", ["output": "dp-1"]).result)
        XCTAssertEqual(named["connector"], "DP-1")
        XCTAssertEqual(named["mode"]?["refresh_mhz"], .int(50_000))
        let listed = try XCTUnwrap(named["outputs"]?.arrayValue)
        XCTAssertEqual(listed.map { $0["connector"] }, ["HDMI-A-1", "DP-1"])
        XCTAssertEqual(listed.map { $0["scene"]?.stringValue.map { URL(fileURLWithPath: $0).lastPathComponent } }, ["left.yaml", "right.yaml"])
        XCTAssertEqual(try XCTUnwrap(named["connectors"]?.arrayValue).map { $0["connector"] }, ["HDMI-A-1", "DP-1"])
        // `display.info`, its older name, is the same command.
        let old = try XCTUnwrap(call("display.info", ["output": "dp-1"]).result)
        XCTAssertEqual(old["connector"], "DP-1")
        XCTAssertEqual(old["mode"], named["mode"])
        XCTAssertEqual(old["outputs"]?.arrayValue?.map { $0["connector"] }, ["HDMI-A-1", "DP-1"])
    }

    func testDataReachesEveryOutputAndScenesAnswerForTheOutputNamed() throws {
        XCTAssertNil(call("data.set", ["values": ["greeting": "hello"]]).error)
        for output in outputs.outputs {
            XCTAssertEqual(output.stage.data(keys: ["greeting"]), ["greeting": "hello"], output.name)
        }
        XCTAssertNil(call("page.show", ["name": "second", "output": "DP-1", "transition": ["kind": "cut"]]).error)
        try Poll.until("DP-1 to show its second page", turning: loop, running: pool) { outputs.outputs[1].stage.currentPage == "second" }
        XCTAssertEqual(outputs.first.stage.currentPage, "main", "the other output keeps its page")
    }

    func testTurningOneOutputOffLeavesTheIdleStateUntilEveryOutputIsOff() throws {
        var heard: [Bool] = []
        control.onOutputPower = { heard.append($0) }
        XCTAssertEqual(call("output.power", ["on": false, "output": "DP-1"]).result?["power"], "off")
        XCTAssertEqual(heard, [], "HDMI-A-1 is still lit")
        // `display.power`, its older name, is the same command.
        XCTAssertEqual(call("display.power", ["on": false]).result?["power"], "off")
        XCTAssertEqual(heard, [false], "every output is off: the screen is blank")
        XCTAssertEqual(call("output.power", ["on": true, "output": "DP-1"]).result?["power"], "on")
        XCTAssertEqual(heard, [false, true], "lighting one wakes the kiosk")
    }

    func testTheMQTTStateListsEachOutputWithItsOwnFigures() throws {
        XCTAssertNil(call("page.show", ["name": "second", "output": "DP-1", "transition": ["kind": "cut"]]).error)
        try Poll.until("DP-1 to show its second page", turning: loop, running: pool) { outputs.outputs[1].stage.currentPage == "second" }
        let state = FleetWiring.state(registry: control.server.commands, uptime: .seconds(5))
        XCTAssertEqual(state["connector"], "HDMI-A-1", "the top level is the first output's")
        XCTAssertEqual(state["uptime_s"], .int(5))
        let listed = try XCTUnwrap(state["outputs"]?.arrayValue)
        XCTAssertEqual(listed.map { $0["connector"] }, ["HDMI-A-1", "DP-1"])
        XCTAssertEqual(listed.map { $0["mode"] }, ["320x240@60", "200x100@50"])
        XCTAssertEqual(listed.map { $0["page"] }, ["main", "second"])
        XCTAssertEqual(listed.map { $0["power"] }, ["on", "on"])
        XCTAssertEqual(listed.map { $0["health"]?["healthy"] }, [.bool(true), .bool(true)])
    }

    /// A scanout mismatch on one output is that output's health reason in the MQTT state, beside the others' `ok`.
    func testAScanoutMismatchIsTheOutputsHealthReasonInTheMQTTState() throws {
        var settings = ScreenHealthSettings()
        settings.restartOn = [.scanoutMismatch]
        outputs.outputs[1].engine.screenHealth = settings
        outputs.outputs[1].engine.scanoutVerified(mismatch: "frame 7: 100 of 20000 pixels differ")
        let listed = try XCTUnwrap(FleetWiring.state(registry: control.server.commands, uptime: .seconds(1))["outputs"]?.arrayValue)
        XCTAssertEqual(listed.map { $0["health"]?["reason"] }, ["ok", "scanout_mismatch: frame 7: 100 of 20000 pixels differ"])
        XCTAssertEqual(listed.map { $0["health"]?["healthy"] }, [.bool(true), .bool(false)])
        outputs.outputs[1].engine.scanoutVerified(mismatch: nil)
        let cleared = try XCTUnwrap(FleetWiring.state(registry: control.server.commands, uptime: .seconds(1))["outputs"]?.arrayValue)
        XCTAssertEqual(cleared.map { $0["health"]?["reason"] }, ["ok", "ok"])
    }

    /// The idle policy: after `blank_after` seconds without input every output with a display goes dark, `stats`
    /// says so, and `output.power on` (any output) wakes them all.
    func testIdleBlanksEveryOutputAndOutputPowerWakesThemAll() throws {
        var configuration = KioskConfiguration()
        configuration.settings.idle.blankAfter = 60
        configuration.settings.input.seat = "none"
        let input = InputWiring(settings: InputSettings(configuration, backend: .headless), outputs: outputs.outputs, control: control,
                                logger: Logger(label: "test"))
        input.start()
        try Poll.until("both outputs lit", turning: loop, running: pool) { outputs.outputs.allSatisfy { $0.engine.isOutputPoweredOn } }
        XCTAssertEqual(call("stats").result?["idle"]?["state"], "active")
        _ = loop.advanceTime(by: .seconds(61))
        try Poll.until("every output blanked", turning: loop, running: pool) { outputs.outputs.allSatisfy { !$0.engine.isOutputPoweredOn } }
        XCTAssertEqual(call("stats").result?["idle"]?["state"], "blanked")
        XCTAssertEqual(call("output.power", ["on": true, "output": "DP-1"]).result?["power"], "on")
        try Poll.until("every output lit again", turning: loop, running: pool) { outputs.outputs.allSatisfy { $0.engine.isOutputPoweredOn } }
        XCTAssertEqual(call("stats").result?["idle"]?["state"], "active")
        withExtendedLifetime(input) {}
    }

    /// A kiosk's `wall:` reaches its outputs through the configuration; an `outputs:` entry's own wall wins there.
    func testTheKiosksWallReachesEveryOutputWithoutOneOfItsOwn() {
        var file = KioskConfig()
        var wall = WallSettings()
        (wall.columns, wall.column) = (2, 1)
        file.wall = wall
        var own = WallSettings()
        (own.rows, own.row) = (2, 1)
        file.outputs = [KioskConfig.Output(connector: "HDMI-A-1"), KioskConfig.Output(connector: "HDMI-A-2", wall: own)]
        let settings = KioskConfiguration.resolve(commandLine: KioskConfig(), configFile: file).settings
        XCTAssertEqual(settings.wall, wall)
        let entries = KioskOutputs.entries(settings.outputs, connector: nil, mode: nil, rotation: .degrees0, scenePath: "s.yaml", wall: settings.wall)
        XCTAssertEqual(entries.map(\.wall), [wall, own])
        XCTAssertEqual(KioskOutputs.entries([], connector: nil, mode: nil, rotation: .degrees0, scenePath: "s.yaml", wall: wall).map(\.wall), [wall])
    }
}
