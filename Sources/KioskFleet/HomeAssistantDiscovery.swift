import KioskControl

/// The retained discovery configs that make a kiosk a Home Assistant device
/// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery): display power as a switch, the current
/// page as a select, fps and missed vblanks as sensors, the frame path's health as a problem sensor, the
/// screenshot as an image, and a device trigger
/// (https://www.home-assistant.io/integrations/device_trigger.mqtt/) for each `emit` action of the scene. Every
/// entity reads the retained `<prefix>/state` and goes unavailable with `<prefix>/status`; the triggers fire on
/// `<prefix>/action`, whose payload is the emitted name. An immutable value; any thread.
public struct HomeAssistantDiscovery: Sendable {
    public static let statusTopic = "homeassistant/status"

    public let prefix: String
    /// The node id in the discovery topics and unique ids: the MQTT client id (unique on a broker), made safe
    /// for them.
    public let nodeID: String
    public let deviceName: String
    public let version: String

    public init(prefix: String, clientID: String, version: String) {
        self.prefix = prefix
        nodeID = Self.safeID(clientID)
        deviceName = "kioskd \(clientID)"
        self.version = version
    }

    public var powerCommandTopic: String { "\(prefix)/ha/power/set" }
    public var pageCommandTopic: String { "\(prefix)/ha/page/set" }
    public var screenshotTopic: String { "\(prefix)/screenshot" }
    /// Where a pressed widget's `emit` action is published, its name the payload.
    public var actionTopic: String { "\(prefix)/action" }

    /// Each config's topic and payload, for a scene with `pages` and the `emit` actions `actions`.
    public func configs(pages: [String], actions: [String] = []) -> [(topic: String, payload: JSONValue)] {
        entities(pages: pages) + triggers(actions: actions)
    }

    /// The device triggers, one per distinct emitted name. Their object ids are the names made safe for a topic
    /// level, numbered when two names come out the same.
    public func triggers(actions: [String]) -> [(topic: String, payload: JSONValue)] {
        var seen: Set<String> = []
        var taken: Set<String> = []
        var result: [(topic: String, payload: JSONValue)] = []
        for name in actions where seen.insert(name).inserted {
            let base = "action_" + Self.safeID(name)
            var object = base
            var n = 2
            while !taken.insert(object).inserted {
                object = "\(base)_\(n)"
                n += 1
            }
            result.append(("homeassistant/device_automation/\(nodeID)/\(object)/config", [
                "automation_type": "trigger", "topic": .string(actionTopic), "payload": .string(name),
                "type": "button_short_press", "subtype": .string(name), "qos": 0, "device": device,
            ]))
        }
        return result
    }

    private func entities(pages: [String]) -> [(topic: String, payload: JSONValue)] {
        [
            config("switch", "power", "Display power", [
                "state_topic": .string("\(prefix)/state"), "value_template": "{{ value_json.power }}",
                "state_on": "on", "state_off": "off", "command_topic": .string(powerCommandTopic),
                "payload_on": "ON", "payload_off": "OFF", "icon": "mdi:monitor",
            ]),
            config("select", "page", "Page", [
                "state_topic": .string("\(prefix)/state"), "value_template": "{{ value_json.page }}",
                "command_topic": .string(pageCommandTopic), "options": .array(pages.map(JSONValue.string)),
            ]),
            config("sensor", "fps", "Frames per second", [
                "state_topic": .string("\(prefix)/state"), "value_template": "{{ value_json.fps }}",
                "unit_of_measurement": "fps", "state_class": "measurement",
            ]),
            config("sensor", "missed_vblanks", "Missed vblanks", [
                "state_topic": .string("\(prefix)/state"), "value_template": "{{ value_json.missed_vblanks }}",
                "state_class": "total_increasing", "entity_category": "diagnostic",
            ]),
            config("binary_sensor", "health", "Frame path problem", [
                "state_topic": .string("\(prefix)/state"), "value_template": "{{ 'OFF' if value_json.health.healthy else 'ON' }}",
                "payload_on": "ON", "payload_off": "OFF", "device_class": "problem", "entity_category": "diagnostic",
            ]),
            config("image", "screenshot", "Screenshot", [
                "image_topic": .string(screenshotTopic), "content_type": "image/png",
            ]),
        ]
    }

    private var device: JSONValue {
        [
            "identifiers": .array([.string("kioskd_\(nodeID)")]), "name": .string(deviceName),
            "manufacturer": "kioskd", "model": "kioskd", "sw_version": .string(version),
        ]
    }

    /// `name` with every character but letters, digits, `_` and `-` made `_`: what discovery topics and ids take.
    static func safeID(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") ? $0 : "_" })
    }

    private func config(_ component: String, _ object: String, _ name: String, _ members: [String: JSONValue]) -> (topic: String, payload: JSONValue) {
        var payload = members
        payload["name"] = .string(name)
        payload["unique_id"] = .string("kioskd_\(nodeID)_\(object)")
        payload["object_id"] = .string("kioskd_\(nodeID)_\(object)")
        payload["availability_topic"] = .string("\(prefix)/status")
        payload["payload_available"] = "online"
        payload["payload_not_available"] = "offline"
        payload["device"] = device
        return ("homeassistant/\(component)/\(nodeID)/\(object)/config", .object(payload))
    }
}
