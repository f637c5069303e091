import Foundation
import KioskTestSupport
import XCTest

/// A Home Assistant device trigger fired by a real touch: kioskd on the vkms output joins a Mosquitto broker on the
/// VM's loopback, and a tap on a button whose `on_press` is `{emit: doorbell}` publishes the name on
/// `<prefix>/action`, the topic and payload its discovered trigger names; with `events: [input]` the touch goes out
/// on `<prefix>/event/input` too, as the control socket's `input` events.
final class FleetTriggerDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    func testATapOnAnEmitButtonFiresItsDeviceTrigger() throws {
        let broker = try MosquittoBroker()
        let scene = broker.directory + "/scene.yaml"
        try """
            widgets:
              - {id: bell, type: button, label: Ring, x: 0, y: 0, width: 100%, height: 100%, on_press: {emit: doorbell}}
            """.write(toFile: scene, atomically: true, encoding: .utf8)
        let config = broker.directory + "/kioskd.yaml"
        try broker.writeKioskdConfig("topic_prefix: kioskd/door\nclient_id: door\nhomeassistant: true\nevents: [input]\n", to: config)
        let messages = try broker.subscribe(["homeassistant/device_automation/#", "kioskd/door/action", "kioskd/door/status",
                                             "kioskd/door/event/input"])
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--scene", scene, "--config", config], readyTimeout: 120)
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        try messages.waitFor(on: "kioskd/door/status", timeout: 60) { $0 == "online" }
        let trigger = try messages.waitForJSON(on: "homeassistant/device_automation/door/action_doorbell/config")[0]
        XCTAssertEqual(trigger["automation_type"] as? String, "trigger")
        let topic = try XCTUnwrap(trigger["topic"] as? String, "\(trigger)")
        XCTAssertEqual(topic, "kioskd/door/action")

        let hid = try UInputDevice(.hid)
        try Poll.until("kioskd to open \(hid.name)", timeout: 20, interval: 0.05) {
            ((try daemon.result("stats")["input"] as? [String: Any])?["devices"] as? [String])?.contains(hid.name) == true
        }
        try hid.tap(0.5, 0.5)
        XCTAssertEqual(try messages.waitFor(on: topic), [try XCTUnwrap(trigger["payload"] as? String)], "the trigger's payload, once")
        // The same tap as input events: down on the button, then its press with the action, then up.
        let inputs = try messages.waitForJSON(3, on: "kioskd/door/event/input")
        let data = inputs.compactMap { ($0["event"] as? String) == "input" ? $0["data"] as? [String: Any] : nil }
        XCTAssertEqual(data.map { $0["kind"] as? String }, ["down", "press", "up"], "\(inputs)")
        XCTAssertEqual(data.map { $0["id"] as? String }, ["bell", "bell", "bell"])
        XCTAssertEqual(data[1]["action"] as? String, "doorbell")
        XCTAssertEqual(data[1]["output"] as? String, "Virtual-1")
    }
}
