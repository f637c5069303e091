import KioskFleet
import KioskScene
import XCTest

/// The `mqtt:` mapping: what it accepts, its defaults, and a located error for each mistake.
final class MQTTSettingsTests: XCTestCase {
    func testAFullMappingDecodes() throws {
        let settings = try MQTTSettings.decode(yaml: """
            url: mqtts://broker.example:8884
            client_id: lobby-3
            topic_prefix: site/lobby-3
            username: kiosk
            password_file: /etc/kioskd/mqtt.password
            ca_file: /etc/kioskd/ca.pem
            keepalive: 30
            group: [lobby, floor1]
            allow: [ping, stats, scene.load]
            events: [data, scene]
            homeassistant: true
            """, file: "mqtt.yaml")
        XCTAssertEqual(settings.host, "broker.example")
        XCTAssertEqual(settings.port, 8884)
        XCTAssertTrue(settings.useTLS)
        XCTAssertEqual(settings.clientID, "lobby-3")
        XCTAssertEqual(settings.resolvedTopicPrefix(deviceID: "x"), "site/lobby-3")
        XCTAssertEqual(settings.keepaliveSeconds, 30)
        XCTAssertEqual(settings.groups, ["lobby", "floor1"])
        XCTAssertEqual(settings.allowedCommands, ["ping", "stats", "scene.load"])
        XCTAssertEqual(settings.events, ["data", "scene"])
        XCTAssertTrue(settings.homeAssistant)
    }

    func testDefaults() throws {
        let settings = try MQTTSettings.decode(yaml: "url: mqtt://127.0.0.1", file: "mqtt.yaml")
        XCTAssertEqual(settings.port, 1883)
        XCTAssertFalse(settings.useTLS)
        XCTAssertEqual(settings.resolvedTopicPrefix(deviceID: "pi-7"), "kioskd/pi-7")
        XCTAssertEqual(settings.resolvedClientID(deviceID: "pi-7"), "kioskd-pi-7")
        XCTAssertEqual(settings.keepaliveSeconds, 60)
        XCTAssertEqual(settings.allowedCommands, Set(MQTTSettings.defaultAllowed))
        XCTAssertFalse(settings.allowedCommands.contains("scene.load"), "loading a scene by path must be listed explicitly")
        XCTAssertFalse(settings.allowedCommands.contains("screenshot"))
        XCTAssertEqual(try MQTTSettings.decode(yaml: "url: mqtts://h", file: "f").port, 8883)
        XCTAssertEqual(try MQTTSettings.decode(yaml: "url: 'mqtt://[::1]:1999'", file: "f").host, "::1")
    }

    func testEveryMistakeIsReportedWithItsLocation() throws {
        let text = """
            url: http://broker
            keepalive: 2
            grop: lobby
            events: [data, flips]
            allow: [subscribe]
            password_file: /x
            """
        XCTAssertThrowsError(try MQTTSettings.decode(yaml: text, file: "m.yaml")) { error in
            let diagnostics = (error as? SceneValidationError)?.diagnostics ?? []
            let lines = diagnostics.map(\.description)
            XCTAssertTrue(lines.contains { $0.hasPrefix("m.yaml:1:6: mqtt.url:") && $0.contains("mqtt:// or mqtts://") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.hasPrefix("m.yaml:2:12: mqtt.keepalive:") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.hasPrefix("m.yaml:3:1: mqtt.grop:") && $0.contains("did you mean 'group'") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("unknown event 'flips'") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("'subscribe' works only on the control socket") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("a password needs 'username'") }, "\(lines)")
        }
    }

    func testMissingURLAndBadPorts() {
        for (text, expected) in [("client_id: a", "missing 'url'"), ("url: mqtt://h:0", "port must be 1 to 65535"),
                                 ("url: mqtt://h:99999", "port must be 1 to 65535"), ("url: mqtt://u@h", "no path or user"),
                                 ("url: mqtt://:1883", "names no host"), ("[1, 2]", "expected a mapping"),
                                 ("url: mqtt://h\ntopic_prefix: a/#", "must not contain '+' or '#'"),
                                 ("url: mqtt://h\nca_file: /ca.pem", "TLS files need an mqtts:// url"),
                                 ("url: mqtts://h\ncert_file: /c.pem", "'cert_file' and 'key_file' go together")] {
            XCTAssertThrowsError(try MQTTSettings.decode(yaml: text, file: "f"), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }
}
