import KioskControl

/// The retained discovery configs that make a kiosk a Home Assistant device
/// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery): display power as a switch, the current
/// page as a select, fps and missed vblanks as sensors, the screenshot as an image. Every entity reads the
/// retained `<prefix>/state` and goes unavailable with `<prefix>/status`. An immutable value; any thread.
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
        nodeID = String(clientID.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" })
        deviceName = "kioskd \(clientID)"
        self.version = version
    }

    public var powerCommandTopic: String { "\(prefix)/ha/power/set" }
    public var pageCommandTopic: String { "\(prefix)/ha/page/set" }
    public var screenshotTopic: String { "\(prefix)/screenshot" }

    /// Each config's topic and payload, for a scene with `pages`.
    public func configs(pages: [String]) -> [(topic: String, payload: JSONValue)] {
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
            config("image", "screenshot", "Screenshot", [
                "image_topic": .string(screenshotTopic), "content_type": "image/png",
            ]),
        ]
    }

    private func config(_ component: String, _ object: String, _ name: String, _ members: [String: JSONValue]) -> (topic: String, payload: JSONValue) {
        var payload = members
        payload["name"] = .string(name)
        payload["unique_id"] = .string("kioskd_\(nodeID)_\(object)")
        payload["object_id"] = .string("kioskd_\(nodeID)_\(object)")
        payload["availability_topic"] = .string("\(prefix)/status")
        payload["payload_available"] = "online"
        payload["payload_not_available"] = "offline"
        payload["device"] = [
            "identifiers": .array([.string("kioskd_\(nodeID)")]), "name": .string(deviceName),
            "manufacturer": "kioskd", "model": "kioskd", "sw_version": .string(version),
        ]
        return ("homeassistant/\(component)/\(nodeID)/\(object)/config", .object(payload))
    }
}
