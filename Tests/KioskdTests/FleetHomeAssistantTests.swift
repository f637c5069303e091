import Foundation
import KioskTestSupport
import XCTest

/// Home Assistant discovery from a headless kioskd on a real broker: the configs carry the keys Home Assistant
/// requires for each component, the topics they name exist, their commands act, a device trigger stands for each
/// `emit` action, and they are published again when Home Assistant comes online and when the scene changes.
final class FleetHomeAssistantTests: XCTestCase {
    private let prefix = "kioskd/hall"

    func testDiscoveryConfigsAreCompleteTheirTopicsExistAndTheirCommandsAct() throws {
        let broker = try MosquittoBroker()
        let scene = broker.directory + "/scene.yaml"
        try """
            pages:
              - name: main
                widgets:
                  - {type: text, text: hello, x: 0, y: 0, width: 100%, height: 50%, foreground: white}
                  - {type: button, label: Ring, x: 0, y: 50%, width: 50%, height: 50%, on_press: {emit: doorbell}}
                  - {type: button, label: Lights, x: 50%, y: 50%, width: 50%, height: 50%, on_press: {emit: "lights on"}}
              - name: second
                widgets: [{type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#203040", on_press: {emit: doorbell}}]
            """.write(toFile: scene, atomically: true, encoding: .utf8)
        let config = broker.directory + "/kioskd.yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nclient_id: hall\nhomeassistant: true\nallow: [display.power, page.show, screenshot]\nscreenshot_retain: true\n", to: config)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene, "--config", config])
        defer { daemon.stop() }

        // Each config, retained, keyed by component.
        var configs: [String: [[String: Any]]] = [:]
        let required: [String: [String]] = ["switch": ["command_topic"], "select": ["command_topic", "options"],
                                            "sensor": ["state_topic"], "binary_sensor": ["state_topic"], "image": ["image_topic"]]
        let all = try broker.subscribe(["homeassistant/#"])
        var topics: [String] = []
        for component in ["switch", "select", "sensor", "binary_sensor", "image"] {
            let count = component == "sensor" ? 2 : 1
            for object in try all.waitForJSONOnTopics(count, prefix: "homeassistant/\(component)/") {
                configs[component, default: []].append(object.payload)
                topics.append(object.topic)
            }
        }
        for (component, list) in configs {
            for config in list {
                for key in required[component]! + ["name", "unique_id", "availability_topic"] {
                    XCTAssertNotNil(config[key], "\(component) config lacks \(key): \(config)")
                }
                let device = config["device"] as? [String: Any]
                XCTAssertEqual((device?["identifiers"] as? [String])?.isEmpty, false, "\(component): \(config)")
                XCTAssertEqual(config["availability_topic"] as? String, "\(prefix)/status")
                if let state = config["state_topic"] as? String { XCTAssertEqual(state, "\(prefix)/state") }
            }
        }
        XCTAssertEqual(Set(topics), ["homeassistant/switch/hall/power/config", "homeassistant/select/hall/page/config",
                                     "homeassistant/sensor/hall/fps/config", "homeassistant/sensor/hall/missed_vblanks/config",
                                     "homeassistant/binary_sensor/hall/health/config", "homeassistant/image/hall/screenshot/config"])
        XCTAssertEqual(configs["select"]?.first?["options"] as? [String], ["main", "second"])
        XCTAssertEqual(Set(configs.values.flatMap { $0 }.compactMap { $0["unique_id"] as? String }).count, 6, "unique ids")

        // A device trigger per distinct emitted name, with the keys Home Assistant's device_automation requires,
        // on the same device as the entities.
        let triggers = try all.waitForJSONOnTopics(2, prefix: "homeassistant/device_automation/")
        XCTAssertEqual(Set(triggers.map(\.topic)), ["homeassistant/device_automation/hall/action_doorbell/config",
                                                    "homeassistant/device_automation/hall/action_lights_on/config"])
        for trigger in triggers.map(\.payload) {
            XCTAssertEqual(trigger["automation_type"] as? String, "trigger", "\(trigger)")
            XCTAssertEqual(trigger["topic"] as? String, "\(prefix)/action", "\(trigger)")
            for key in ["type", "subtype", "payload"] { XCTAssertFalse((trigger[key] as? String ?? "").isEmpty, "trigger lacks \(key): \(trigger)") }
            XCTAssertEqual(trigger["payload"] as? String, trigger["subtype"] as? String)
            XCTAssertEqual((trigger["device"] as? [String: Any])?["identifiers"] as? [String],
                           (configs["switch"]?.first?["device"] as? [String: Any])?["identifiers"] as? [String], "the kiosk's device")
        }
        XCTAssertEqual(Set(triggers.compactMap { $0.payload["payload"] as? String }), ["doorbell", "lights on"])

        // The state and availability topics they read hold retained values with the fields the templates name.
        XCTAssertEqual(String(decoding: try broker.firstMessage(on: "\(prefix)/status"), as: UTF8.self), "online")
        let state = try XCTUnwrap(try JSONSerialization.jsonObject(with: try broker.firstMessage(on: "\(prefix)/state")) as? [String: Any])
        for field in ["power", "page", "fps", "missed_vblanks"] { XCTAssertNotNil(state[field], "state lacks \(field): \(state)") }
        XCTAssertEqual((state["health"] as? [String: Any])?["healthy"] as? Bool, true, "the binary sensor's template reads health.healthy: \(state)")

        // The switch, the select and the image act.
        let stateUpdates = try broker.subscribe(["\(prefix)/state"])
        try broker.publish(configs["switch"]![0]["command_topic"] as! String, "OFF")
        try stateUpdates.waitForJSON(on: "\(prefix)/state") { $0["power"] as? String == "off" }
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "off")
        try broker.publish(configs["select"]![0]["command_topic"] as! String, "second")
        try stateUpdates.waitForJSON(on: "\(prefix)/state") { $0["page"] as? String == "second" }
        try broker.publish("\(prefix)/screenshot/request", "")
        let png = try broker.firstMessage(on: configs["image"]![0]["image_topic"] as! String)
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG bytes")

        // Home Assistant restarting: the configs come again, triggers included.
        try broker.publish("homeassistant/status", "online")
        XCTAssertEqual(try all.waitForJSONOnTopics(8, prefix: "homeassistant/").count, 8)

        // A new scene: its triggers are published, and the one it lacks is removed (an empty retained config).
        let next = broker.directory + "/next.yaml"
        try """
            pages:
              - name: only
                widgets: [{type: button, label: Open, x: 0, y: 0, width: 100%, height: 100%, on_press: {emit: gate}}]
            """.write(toFile: next, atomically: true, encoding: .utf8)
        XCTAssertEqual(try daemon.request(#"{"id": 1, "cmd": "scene.load", "args": {"path": "\#(next)"}}"#)["ok"] as? Bool, true)
        try all.waitForJSON(on: "homeassistant/device_automation/hall/action_gate/config") { $0["subtype"] as? String == "gate" }
        try all.waitForJSON(on: "homeassistant/select/hall/page/config") { $0["options"] as? [String] == ["only"] }
        try Poll.until("the broker to hold only the new scene's trigger", timeout: 20) {
            try broker.subscribe(["homeassistant/device_automation/#"]).keptMessages(prefix: "homeassistant/device_automation/").map(\.topic)
                == ["homeassistant/device_automation/hall/action_gate/config"]
        }
    }
}
