import Foundation
import KioskTestSupport
import XCTest

/// `kioskd run --backend headless` with an `outputs:` section: one headless output per entry at its own mode, each
/// showing its own scene (or the run's scene, mirrored), and the control commands routed by `output`.
final class MultiOutputTests: XCTestCase {
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

    var dir: URL!
    var daemon: ControlledKioskd!

    /// HDMI-A-1 at 320x240@60 with the left scene, HDMI-A-2 at 200x300@50 with the right one, DP-1 at 160x120
    /// with the run's scene (the left one) mirrored.
    override func setUpWithError() throws {
        dir = try KioskdProcess.scratchDirectory("multi-output-\(name.filter(\.isLetter))")
        try Self.left.write(to: dir.appendingPathComponent("left.yaml"), atomically: true, encoding: .utf8)
        try Self.right.write(to: dir.appendingPathComponent("right.yaml"), atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            scene: left.yaml
            outputs:
              - {connector: HDMI-A-1, mode: 320x240@60, scene: left.yaml}
              - {connector: HDMI-A-2, mode: 200x300@50, scene: right.yaml}
              - {connector: DP-1, mode: 160x120}
            """.write(to: config, atomically: true, encoding: .utf8)
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--config", config.path, "--screenshot-dir", KioskdProcess.scratchRoot])
    }

    override func tearDown() {
        if let daemon {
            let result = daemon.stop()
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        daemon = nil
    }

    /// The PNG `screenshot` writes for `output`.
    func screenshot(_ output: String) throws -> PNGFile {
        let path = dir.appendingPathComponent("shot-\(output).png").path
        _ = try daemon.result("screenshot", #"{"path": "\#(path)", "output": "\#(output)"}"#)
        return try PNGFile(contentsOf: URL(fileURLWithPath: path))
    }

    /// What a single-output headless run of `scene` at `mode` shows.
    func singleOutputRender(_ scene: String, mode: String) throws -> PNGFile {
        let png = dir.appendingPathComponent("reference-\(scene)-\(mode).png")
        let run = try KioskdProcess.run(["run", "--backend", "headless", "--mode", mode, "--scene", dir.appendingPathComponent(scene).path,
                                         "--socket", "none", "--frames", "30", "--screenshot", png.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        return try PNGFile(contentsOf: png)
    }

    /// Screenshots of `output` until one equals `expected` (the scene renders after start), for at most 20 s.
    func assertShows(_ expected: PNGFile, on output: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var last: PNGFile?
        try? Poll.until("\(output) to show its scene", timeout: 20, interval: 0.1) {
            last = try screenshot(output)
            return last?.pixels == expected.pixels
        }
        XCTAssertEqual(last?.width, expected.width, output, file: file, line: line)
        XCTAssertEqual(last?.height, expected.height, output, file: file, line: line)
        XCTAssertTrue(last?.pixels == expected.pixels, "\(output): the screenshot differs from the single-output render", file: file, line: line)
    }

    func testEachOutputShowsItsSceneAsASingleOutputRunDoesAtItsMode() throws {
        let left = try singleOutputRender("left.yaml", mode: "320x240@60")
        XCTAssertEqual(left.rgb(x: 60, y: 50), 0xFFCC00, "the reference shows the left scene's box")
        try assertShows(left, on: "HDMI-A-1")
        try assertShows(try singleOutputRender("right.yaml", mode: "200x300@50"), on: "HDMI-A-2")
        try assertShows(try singleOutputRender("left.yaml", mode: "160x120"), on: "DP-1")
        let right = try screenshot("hdmi-a-2")
        XCTAssertEqual(right.rgb(x: 150, y: 40), 0x00FF80, "the right scene's box, at its own mode's 50%..90%")
    }

    func testDisplayInfoListsEveryOutputAndKioskctlPrintsThem() throws {
        let info = try daemon.result("display.info")
        XCTAssertEqual(info["connector"] as? String, "HDMI-A-1", "the top level is the first output")
        let outputs = try XCTUnwrap(info["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["connector"] as? String }, ["HDMI-A-1", "HDMI-A-2", "DP-1"])
        XCTAssertEqual(outputs.map { ($0["mode"] as? [String: Any])?["name"] as? String }, ["320x240@60", "200x300@50", "160x120@60"])
        XCTAssertEqual(outputs.map { $0["connected"] as? Bool }, [true, true, true])
        XCTAssertEqual(outputs.map { ($0["scene"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } },
                       ["left.yaml", "right.yaml", "left.yaml"])
        let second = try daemon.result("display.info", #"{"output": "HDMI-A-2"}"#)
        XCTAssertEqual(second["connector"] as? String, "HDMI-A-2")
        XCTAssertEqual((second["mode"] as? [String: Any])?["refresh_mhz"] as? Int, 50_000)

        let printed = try daemon.kioskctl(["display-info"])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let text = String(decoding: printed.stdout, as: UTF8.self)
        for connector in ["HDMI-A-1", "HDMI-A-2", "DP-1"] {
            XCTAssertTrue(text.contains("connector: \(connector)"), text)
        }
    }

    func testStatsReportEachOutputUnderItsName() throws {
        try Poll.until("every output to flip", timeout: 20, interval: 0.05) {
            let byOutput = try daemon.result("stats")["by_output"] as? [String: [String: Any]] ?? [:]
            return ["HDMI-A-1", "HDMI-A-2", "DP-1"].allSatisfy { (byOutput[$0]?["frames_flipped"] as? Int ?? 0) > 0 }
        }
        let stats = try daemon.result("stats")
        XCTAssertEqual(stats["connector"] as? String, "HDMI-A-1", "the top-level fields stay the first output's")
        XCTAssertNotNil(stats["frames_flipped"] as? Int)
        let byOutput = try XCTUnwrap(stats["by_output"] as? [String: [String: Any]])
        XCTAssertEqual(byOutput["HDMI-A-2"]?["mode"] as? String, "200x300@50")
        XCTAssertEqual(byOutput["HDMI-A-2"]?["connector"] as? String, "HDMI-A-2")
        XCTAssertEqual(byOutput["DP-1"]?["display_connected"] as? Bool, true)
        XCTAssertNotNil(byOutput["HDMI-A-2"]?["renders_completed"] as? Int, "the output's engine figures")
    }

    func testSceneAndPageCommandsGoToTheOutputTheyName() throws {
        let events = try ControlEventStream(daemon, events: ["scene"])
        XCTAssertEqual(try daemon.result("page.show", #"{"name": "second", "output": "HDMI-A-2"}"#)["page"] as? String, "second")
        let shown = try events.waitFor("page_shown on HDMI-A-2") { $0.string("kind") == "page_shown" }
        XCTAssertEqual(shown.string("output"), "HDMI-A-2")
        XCTAssertEqual(try daemon.result("scene.get", #"{"output": "HDMI-A-2"}"#)["current_page"] as? String, "second")
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "main", "without output: the first output")
        XCTAssertEqual(try daemon.error("page.show", #"{"name": "second"}"#).code, "not_found", "the first output's scene has no such page")

        let yaml = ##"size: display\nbackground: \"#00ff00\"\npages:\n  - {name: green, widgets: []}"##
        XCTAssertEqual(try daemon.result("scene.load", #"{"yaml": "\#(yaml)", "output": "DP-1"}"#)["status"] as? String, "loading")
        try Poll.until("DP-1 to load the inline scene", timeout: 20, interval: 0.05) {
            try daemon.result("scene.get", #"{"output": "DP-1"}"#)["current_page"] as? String == "green"
        }
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "main", "HDMI-A-1 keeps its scene")
        try Poll.until("DP-1 to show the green scene", timeout: 20, interval: 0.1) {
            try screenshot("DP-1").rgb(x: 80, y: 60) == 0x00FF00
        }
    }

    func testDataReachesEveryOutputAndPowerGoesToTheOutputNamed() throws {
        XCTAssertEqual(try daemon.result("data.set", #"{"values": {"greeting": "hello"}}"#)["set"] as? Int, 1)
        for output in ["HDMI-A-1", "HDMI-A-2", "DP-1"] {
            let values = try daemon.result("data.get", #"{"output": "\#(output)"}"#)["values"] as? [String: Any]
            XCTAssertEqual(values?["greeting"] as? String, "hello", output)
        }

        XCTAssertEqual(try daemon.result("display.power", #"{"on": false, "output": "HDMI-A-2"}"#)["power"] as? String, "off")
        let outputs = try XCTUnwrap(try daemon.result("display.info")["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["power"] as? String }, ["on", "off", "on"], "only HDMI-A-2 is off")
        XCTAssertEqual(try daemon.result("display.power", #"{"on": true, "output": "HDMI-A-2"}"#)["power"] as? String, "on")
    }

    func testKioskctlNamesTheOutputWithConnector() throws {
        let page = try daemon.kioskctl(["page", "show", "second", "--connector", "HDMI-A-2"])
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertEqual(try daemon.result("scene.get", #"{"output": "HDMI-A-2"}"#)["current_page"] as? String, "second")
        let power = try daemon.kioskctl(["power", "off", "--connector", "DP-1"])
        XCTAssertEqual(power.status, 0, power.stderr)
        XCTAssertEqual(try daemon.result("display.info", #"{"output": "DP-1"}"#)["power"] as? String, "off")
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "on")
        let shot = dir.appendingPathComponent("kioskctl-shot.png")
        let screenshot = try daemon.kioskctl(["screenshot", "-o", shot.path, "--connector", "HDMI-A-2"])
        XCTAssertEqual(screenshot.status, 0, screenshot.stderr)
        XCTAssertEqual(try PNGFile(contentsOf: shot).width, 200)
        let info = try daemon.kioskctl(["display-info", "--connector", "HDMI-A-2", "--json"])
        XCTAssertTrue(String(decoding: info.stdout, as: UTF8.self).contains(#""name":"200x300@50""#))
        let unknown = try daemon.kioskctl(["scene", "get", "--connector", "HDMI-A-9"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("no output named 'HDMI-A-9'; outputs: HDMI-A-1, HDMI-A-2, DP-1"), unknown.stderr)
    }

    func testAnUnknownOutputIsAnErrorNamingTheOutputsDriven() throws {
        let requests = [("display.info", "{}"), ("display.power", #"{"on": false}"#), ("screenshot", "{}"), ("scene.get", "{}"),
                        ("page.show", #"{"name": "main"}"#), ("scene.load", #"{"yaml": "pages: []"}"#)]
        for (command, arguments) in requests {
            let withOutput = arguments.dropLast() + (arguments == "{}" ? "" : ", ") + #""output": "HDMI-A-3"}"#
            let error = try daemon.error(command, String(withOutput))
            XCTAssertEqual(error.code, "not_found", command)
            XCTAssertEqual(error.message, "\(command): no output named 'HDMI-A-3'; outputs: HDMI-A-1, HDMI-A-2, DP-1", command)
        }
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "on", "a refused request changes nothing")
    }

    /// Every output's flips and presented frames reach subscribers, each naming its output, numbered per output.
    func testFlipAndFrameEventsNameTheirOutput() throws {
        let events = try ControlEventStream(daemon, events: ["flip", "frame"])
        // The greeting changes the left scene's label, shown on HDMI-A-1 and mirrored on DP-1; HDMI-A-2 changes page.
        _ = try daemon.result("data.set", #"{"values": {"greeting": "events"}}"#)
        _ = try daemon.result("page.show", #"{"name": "second", "output": "HDMI-A-2", "transition": {"kind": "cut"}}"#)
        var flipped = Set<String>(), framed = Set<String>()
        let all: Set<String> = ["HDMI-A-1", "HDMI-A-2", "DP-1"]
        try events.waitFor(1, "a flip and a frame event from every output") { event in
            guard let output = event.string("output") else { return false }
            if event.name == "flip" {
                XCTAssertNotNil(event.int("sequence"), "\(event)")
                flipped.insert(output)
            } else {
                XCTAssertGreaterThan(event.int("frame") ?? 0, 0, "\(event)")
                framed.insert(output)
            }
            return flipped == all && framed == all
        }
        XCTAssertEqual(flipped, all)
        XCTAssertEqual(framed, all)
    }
}
