import Foundation
import KioskTestSupport
import XCTest

/// Home Assistant discovery from a headless kioskd on a real broker: the configs carry the keys Home Assistant
/// requires for each component, the topics they name exist, their commands act, and they are published again
/// when Home Assistant comes online.
final class FleetHomeAssistantTests: XCTestCase {
    private let prefix = "kioskd/hall"

    func testDiscoveryConfigsAreCompleteTheirTopicsExistAndTheirCommandsAct() throws {
        let broker = try MosquittoBroker()
        let scene = broker.directory + "/scene.yaml"
        try """
            pages:
              - name: main
                widgets: [{type: text, text: hello, x: 0, y: 0, width: 100%, height: 50%, foreground: white}]
              - name: second
                widgets: [{type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#203040"}]
            """.write(toFile: scene, atomically: true, encoding: .utf8)
        let config = broker.directory + "/kioskd.yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nclient_id: hall\nhomeassistant: true\nallow: [display.power, page.show]\n", to: config)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene, "--config", config])
        defer { daemon.stop() }

        // Each config, retained, keyed by component.
        var configs: [String: [[String: Any]]] = [:]
        let required: [String: [String]] = ["switch": ["command_topic"], "select": ["command_topic", "options"],
                                            "sensor": ["state_topic"], "image": ["image_topic"]]
        let all = try broker.subscribe(["homeassistant/#"])
        var topics: [String] = []
        for component in ["switch", "select", "sensor", "image"] {
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
                                     "homeassistant/image/hall/screenshot/config"])
        XCTAssertEqual(configs["select"]?.first?["options"] as? [String], ["main", "second"])
        XCTAssertEqual(Set(configs.values.flatMap { $0 }.compactMap { $0["unique_id"] as? String }).count, 5, "unique ids")

        // The state and availability topics they read hold retained values with the fields the templates name.
        XCTAssertEqual(String(decoding: try broker.firstMessage(on: "\(prefix)/status"), as: UTF8.self), "online")
        let state = try XCTUnwrap(try JSONSerialization.jsonObject(with: try broker.firstMessage(on: "\(prefix)/state")) as? [String: Any])
        for field in ["power", "page", "fps", "missed_vblanks"] { XCTAssertNotNil(state[field], "state lacks \(field): \(state)") }

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

        // Home Assistant restarting: the configs come again.
        try broker.publish("homeassistant/status", "online")
        XCTAssertEqual(try all.waitForJSONOnTopics(5, prefix: "homeassistant/").count, 5)
    }
}
