import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskScene
import KioskTestSupport
import XCTest

/// A kiosk with an `outputs:` section, in process on the headless backend: one output per entry at its own mode,
/// each showing its own scene (or the run's scene, mirrored), and the control commands and events routed by output.
/// (`KioskdTests.KioskctlOutputsTests` keeps kioskctl's `--connector` and its printing of every output;
/// `KioskdTests.MultiOutputReloadTests` SIGHUP to kioskd with two outputs.)
final class OutputRoutingTests: XCTestCase {
    static let left = """
        size: display
        background: "#802010"
        pages:
          - name: main
            widgets:
              - {id: box, type: rect, background: "#ffcc00", x: 10%, y: 10%, width: 30%, height: 30%}
              - {id: label, type: text, text: "Left {greeting}", x: 5%, y: 60%, width: 90%, height: 20%, foreground: white}
        """
    static let right = """
        size: display
        background: "#103080"
        pages:
          - name: main
            widgets:
              - {id: box, type: rect, background: "#00ff80", x: 50%, y: 10%, width: 40%, height: 20%}
              - {id: label, type: text, text: "Right", x: 5%, y: 60%, width: 90%, height: 20%, foreground: white}
          - name: second
            widgets:
              - {id: other, type: rect, background: "#ff00ff", x: 0, y: 0, width: 50%, height: 50%}
        """
    private static let all: Set<String> = ["HDMI-A-1", "HDMI-A-2", "DP-1"]

    private var harness: KioskHarness!
    private var client: HarnessClient!

    /// HDMI-A-1 at 320x240@60 with the left scene, HDMI-A-2 at 200x300@50 with the right one, DP-1 at 160x120 with the
    /// run's scene (the left one) mirrored. The real loop: every output flips by itself.
    override func setUpWithError() throws {
        harness = try KioskHarness("output-routing", files: ["left.yaml": Self.left, "right.yaml": Self.right], outputs: [
            KioskConfig.Output(connector: "HDMI-A-1", mode: ModeRequest(width: 320, height: 240, refreshHz: 60), scene: "left.yaml"),
            KioskConfig.Output(connector: "HDMI-A-2", mode: ModeRequest(width: 200, height: 300, refreshHz: 50), scene: "right.yaml"),
            KioskConfig.Output(connector: "DP-1", mode: ModeRequest(width: 160, height: 120)),
        ], manualClock: false) { run, directory in
            run.configuration.settings.scene = directory.appendingPathComponent("left.yaml").path
            run.configuration.settings.control.screenshotDirectory = KioskdProcess.scratchRoot
        }
        client = try harness.connect()
    }

    override func tearDown() {
        client = nil
        harness = nil
    }

    /// The PNG `screenshot` writes for `output`.
    private func screenshot(_ output: String) throws -> Screen {
        let path = harness.directory.appendingPathComponent("shot-\(output).png").path
        XCTAssertEqual(try client.result("screenshot", #"{"path": "\#(path)", "output": "\#(output)"}"#)["path"] as? String, path)
        return try Screen(png: path)
    }

    /// What a single-output kiosk of `scene` at `mode` shows, whole.
    private func singleOutputRender(_ scene: String, mode: ModeRequest) throws -> Screen {
        let single = try KioskHarness("output-routing-reference", scene: scene) { run, _ in
            run.configuration.settings.mode = mode
            run.configuration.settings.control.socket = "none"
        }
        return try single.settledScreen(of: single.first)
    }

    func testEachOutputShowsItsSceneAsASingleOutputRunDoesAtItsMode() throws {
        let left = try singleOutputRender(Self.left, mode: ModeRequest(width: 320, height: 240, refreshHz: 60))
        XCTAssertEqual(left.rgb(x: 60, y: 50), 0xFFCC00, "the reference shows the left scene's box")
        let references = [("HDMI-A-1", left),
                          ("HDMI-A-2", try singleOutputRender(Self.right, mode: ModeRequest(width: 200, height: 300, refreshHz: 50))),
                          ("DP-1", try singleOutputRender(Self.left, mode: ModeRequest(width: 160, height: 120)))]
        for (name, expected) in references {
            let shown = try harness.settledScreen(of: try harness.output(name))
            XCTAssertEqual(shown.width, expected.width, name)
            XCTAssertEqual(shown.height, expected.height, name)
            XCTAssertTrue(shown.pixels == expected.pixels, "\(name): the screen differs from the single-output render")
        }
        let right = try screenshot("hdmi-a-2")
        XCTAssertEqual(right.width, 200)
        XCTAssertEqual(right.height, 300)
        XCTAssertEqual(right.rgb(x: 150, y: 40), 0x00FF80, "the right scene's box, at its own mode's 50%..90%")
    }

    func testDisplayInfoListsEveryOutput() throws {
        let info = try client.result("display.info")
        XCTAssertEqual(info["connector"] as? String, "HDMI-A-1", "the top level is the first output")
        let outputs = try XCTUnwrap(info["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["connector"] as? String }, ["HDMI-A-1", "HDMI-A-2", "DP-1"])
        XCTAssertEqual(outputs.map { ($0["mode"] as? [String: Any])?["name"] as? String }, ["320x240@60", "200x300@50", "160x120@60"])
        XCTAssertEqual(outputs.map { $0["connected"] as? Bool }, [true, true, true])
        XCTAssertEqual(outputs.map { ($0["scene"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } },
                       ["left.yaml", "right.yaml", "left.yaml"])
        let second = try client.result("display.info", #"{"output": "HDMI-A-2"}"#)
        XCTAssertEqual(second["connector"] as? String, "HDMI-A-2")
        XCTAssertEqual((second["mode"] as? [String: Any])?["refresh_mhz"] as? Int, 50_000)
    }

    func testStatsReportEachOutputUnderItsName() throws {
        try harness.waitUntil("every output to flip") {
            let byOutput = try client.result("stats")["by_output"] as? [String: [String: Any]] ?? [:]
            return Self.all.allSatisfy { (byOutput[$0]?["frames_flipped"] as? Int ?? 0) > 0 }
        }
        let stats = try client.result("stats")
        XCTAssertEqual(stats["connector"] as? String, "HDMI-A-1", "the top-level fields stay the first output's")
        XCTAssertNotNil(stats["frames_flipped"] as? Int)
        let byOutput = try XCTUnwrap(stats["by_output"] as? [String: [String: Any]])
        XCTAssertEqual(Set(byOutput.keys), Self.all)
        XCTAssertEqual(byOutput["HDMI-A-2"]?["mode"] as? String, "200x300@50")
        XCTAssertEqual(byOutput["HDMI-A-2"]?["connector"] as? String, "HDMI-A-2")
        XCTAssertEqual(byOutput["DP-1"]?["display_connected"] as? Bool, true)
        XCTAssertNotNil(byOutput["HDMI-A-2"]?["renders_completed"] as? Int, "the output's engine figures")
    }

    func testSceneAndPageCommandsGoToTheOutputTheyName() throws {
        let events = try harness.subscribe(["scene"])
        XCTAssertEqual(try client.result("page.show", #"{"name": "second", "output": "HDMI-A-2"}"#)["page"] as? String, "second")
        let shown = try events.waitFor("scene") { $0["kind"] as? String == "page_shown" }
        XCTAssertEqual(shown["output"] as? String, "HDMI-A-2")
        XCTAssertEqual(try client.result("scene.get", #"{"output": "HDMI-A-2"}"#)["current_page"] as? String, "second")
        XCTAssertEqual(try client.result("scene.get")["current_page"] as? String, "main", "without output: the first output")
        XCTAssertEqual(try client.error("page.show", #"{"name": "second"}"#).code, "not_found", "the first output's scene has no such page")

        let yaml = ##"size: display\nbackground: \"#00ff00\"\npages:\n  - {name: green, widgets: []}"##
        XCTAssertEqual(try client.result("scene.load", #"{"yaml": "\#(yaml)", "output": "DP-1"}"#)["status"] as? String, "loading")
        let loaded = try events.waitFor("scene") { $0["kind"] as? String == "loaded" }
        XCTAssertEqual(loaded["output"] as? String, "DP-1")
        XCTAssertEqual(try client.result("scene.get", #"{"output": "DP-1"}"#)["current_page"] as? String, "green")
        XCTAssertEqual(try client.result("scene.get")["current_page"] as? String, "main", "HDMI-A-1 keeps its scene")
        XCTAssertEqual(try harness.settledScreen(of: try harness.output("DP-1")).rgb(x: 80, y: 60), 0x00FF00)
        XCTAssertEqual(try screenshot("DP-1").rgb(x: 80, y: 60), 0x00FF00, "the screenshot of the output named")
        XCTAssertEqual(try harness.settledScreen(of: harness.first).rgb(x: 2, y: 2), 0x802010, "HDMI-A-1 still shows the left scene")
    }

    func testDataReachesEveryOutputAndPowerGoesToTheOutputNamed() throws {
        XCTAssertEqual(try client.result("data.set", #"{"values": {"greeting": "hello"}}"#)["set"] as? Int, 1)
        for output in ["HDMI-A-1", "HDMI-A-2", "DP-1"] {
            let values = try client.result("data.get", #"{"output": "\#(output)"}"#)["values"] as? [String: Any]
            XCTAssertEqual(values?["greeting"] as? String, "hello", output)
        }

        XCTAssertEqual(try client.result("display.power", #"{"on": false, "output": "HDMI-A-2"}"#)["power"] as? String, "off")
        let outputs = try XCTUnwrap(try client.result("display.info")["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["power"] as? String }, ["on", "off", "on"], "only HDMI-A-2 is off")
        XCTAssertEqual(try harness.output("HDMI-A-2").engine.isOutputPoweredOn, false)
        XCTAssertEqual(try client.result("display.power", #"{"on": true, "output": "HDMI-A-2"}"#)["power"] as? String, "on")
        XCTAssertEqual(try harness.output("HDMI-A-2").engine.isOutputPoweredOn, true)
    }

    func testAnUnknownOutputIsAnErrorNamingTheOutputsDriven() throws {
        let requests = [("display.info", "{}"), ("display.power", #"{"on": false}"#), ("screenshot", "{}"), ("scene.get", "{}"),
                        ("page.show", #"{"name": "main"}"#), ("scene.load", #"{"yaml": "pages: []"}"#)]
        for (command, arguments) in requests {
            let withOutput = arguments.dropLast() + (arguments == "{}" ? "" : ", ") + #""output": "HDMI-A-3"}"#
            let error = try client.error(command, String(withOutput))
            XCTAssertEqual(error.code, "not_found", command)
            XCTAssertEqual(error.message, "\(command): no output named 'HDMI-A-3'; outputs: HDMI-A-1, HDMI-A-2, DP-1", command)
        }
        let outputs = try XCTUnwrap(try client.result("display.info")["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["power"] as? String }, ["on", "on", "on"], "a refused request changes nothing")
    }

    /// Every output's flips and presented frames reach subscribers, each naming its output, numbered per output.
    func testFlipAndFrameEventsNameTheirOutput() throws {
        let events = try harness.subscribe(["flip", "frame"])
        // The greeting changes the left scene's label, shown on HDMI-A-1 and mirrored on DP-1; HDMI-A-2 changes page.
        _ = try client.result("data.set", #"{"values": {"greeting": "events"}}"#)
        _ = try client.result("page.show", #"{"name": "second", "output": "HDMI-A-2", "transition": {"kind": "cut"}}"#)
        var flipped = Set<String>(), framed = Set<String>()
        var flipsWithoutSequence: [[String: Any]] = [], framesWithoutNumber: [[String: Any]] = []
        let deadline = Date() + 20
        while flipped != Self.all || framed != Self.all {
            guard Date() < deadline else {
                return XCTFail("no flip and frame event from every output within 20 s: flips from \(flipped), frames from \(framed)")
            }
            let event = try events.nextEvent()
            guard let output = event.data["output"] as? String else { continue }
            if event.name == "flip" {
                if event.data["sequence"] as? Int == nil { flipsWithoutSequence.append(event.data) }
                flipped.insert(output)
            } else if event.name == "frame" {
                if (event.data["frame"] as? Int ?? 0) <= 0 { framesWithoutNumber.append(event.data) }
                framed.insert(output)
            }
        }
        XCTAssertEqual(flipped, Self.all)
        XCTAssertEqual(framed, Self.all)
        XCTAssertEqual(flipsWithoutSequence.count, 0, "\(flipsWithoutSequence)")
        XCTAssertEqual(framesWithoutNumber.count, 0, "\(framesWithoutNumber)")
    }
}
