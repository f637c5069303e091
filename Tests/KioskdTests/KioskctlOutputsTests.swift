import Foundation
import KioskTestSupport
import XCTest

/// kioskctl with a kioskd of several outputs (`kioskd run --backend headless` with an `outputs:` section): `--connector`
/// names the output a subcommand acts on, an unknown one is an error naming the outputs, and `display-info` prints
/// every output. The routing itself is tested in process by `KioskAppTests.OutputRoutingTests`.
final class KioskctlOutputsTests: XCTestCase {
    func testKioskctlNamesTheOutputWithConnectorAndPrintsEveryOutput() throws {
        let dir = try KioskdProcess.scratchDirectory("kioskctl-outputs")
        let scene = "size: display\npages:\n  - name: main\n    widgets: []\n  - name: second\n    widgets: []\n"
        try scene.write(to: dir.appendingPathComponent("scene.yaml"), atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            scene: scene.yaml
            outputs:
              - {connector: HDMI-A-1, mode: 320x240@60}
              - {connector: HDMI-A-2, mode: 200x300@50}
              - {connector: DP-1, mode: 160x120}
            """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--config", config.path, "--screenshot-dir", KioskdProcess.scratchRoot])
        defer {
            let result = daemon.stop()
            XCTAssertEqual(result.status, 0, result.stderr)
        }

        let printed = try daemon.kioskctl(["display-info"])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let text = String(decoding: printed.stdout, as: UTF8.self)
        for connector in ["HDMI-A-1", "HDMI-A-2", "DP-1"] {
            XCTAssertTrue(text.contains("connector: \(connector)"), text)
        }

        let page = try daemon.kioskctl(["page", "show", "second", "--connector", "HDMI-A-2"])
        XCTAssertEqual(page.status, 0, page.stderr)
        XCTAssertEqual(try daemon.result("scene.get", #"{"output": "HDMI-A-2"}"#)["current_page"] as? String, "second")
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "main")
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
}
