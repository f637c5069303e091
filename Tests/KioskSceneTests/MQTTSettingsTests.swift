import Foundation
import KioskCore
import KioskScene
import XCTest

/// The config file's `mqtt:` section: what it accepts, its defaults, and a located error for each mistake.
final class MQTTSettingsTests: XCTestCase {
    /// `text` as the `mqtt:` section of a config file in /etc/kioskd: its lines move one down and two right.
    private func decode(_ text: String, file: String = "f") throws -> MQTTSettings {
        let indented = text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
        let loaded = try ConfigLoader.parse(data: Data("mqtt:\n\(indented)\n".utf8), file: file, baseDirectory: "/etc/kioskd")
        return try XCTUnwrap(loaded.config.mqtt)
    }

    func testAFullMappingDecodes() throws {
        let settings = try decode("""
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
            """)
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

    func testVideoAndInputEventsCanBePublished() throws {
        XCTAssertEqual(try decode("url: mqtt://broker\nevents: [video, input, error]").events, ["video", "input", "error"])
    }

    func testDefaults() throws {
        let settings = try decode("url: mqtt://127.0.0.1")
        XCTAssertEqual(settings.port, 1883)
        XCTAssertFalse(settings.useTLS)
        XCTAssertEqual(settings.resolvedTopicPrefix(deviceID: "pi-7"), "kioskd/pi-7")
        XCTAssertEqual(settings.resolvedClientID(deviceID: "pi-7"), "kioskd-pi-7")
        XCTAssertEqual(settings.keepaliveSeconds, 60)
        XCTAssertEqual(settings.allowedCommands, ["ping", "stats"], "default-deny: only the two read-only liveness commands")
        XCTAssertFalse(settings.screenshotRetain)
        XCTAssertEqual(settings.screenshotsPerMinute, 6)
        XCTAssertEqual(settings.maximumPacketBytes, 256 * 1024)
        XCTAssertFalse(settings.allowedCommands.contains("scene.load"), "loading a scene by path must be listed explicitly")
        XCTAssertFalse(settings.allowedCommands.contains("screenshot"))
        XCTAssertEqual(try decode("url: mqtts://h").port, 8883)
        XCTAssertEqual(try decode("url: 'mqtt://[::1]:1999'").host, "::1")
    }

    func testScreenshotAndPacketSettings() throws {
        let settings = try decode("url: mqtt://h\nscreenshot_retain: true\nscreenshots_per_minute: 2\nmax_packet_size: 65536")
        XCTAssertTrue(settings.screenshotRetain)
        XCTAssertEqual(settings.screenshotsPerMinute, 2)
        XCTAssertEqual(settings.maximumPacketBytes, 65536)
        XCTAssertThrowsError(try decode("url: mqtt://h\nscreenshots_per_minute: 0\nmax_packet_size: 100\nscreenshot_retain: maybe")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("mqtt.screenshots_per_minute: expected a whole number from 1 to 60"), text)
            XCTAssertTrue(text.contains("mqtt.max_packet_size: expected bytes from 4096 to 16777216"), text)
            XCTAssertTrue(text.contains("mqtt.screenshot_retain: expected true or false"), text)
        }
    }

    func testThumbnailSettings() throws {
        XCTAssertNil(try decode("url: mqtt://h").thumbnailEverySeconds, "no thumbnails unless asked")
        let settings = try decode("url: mqtt://h\nthumbnail_every: 300\nthumbnail_width: 160")
        XCTAssertEqual(settings.thumbnailEverySeconds, 300)
        XCTAssertEqual(settings.thumbnailWidth, 160)
        XCTAssertEqual(try decode("url: mqtt://h\nthumbnail_every: 60").thumbnailWidth, 320)
        XCTAssertThrowsError(try decode("url: mqtt://h\nthumbnail_every: 1\nthumbnail_width: 4000")) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("f:3:20: mqtt.thumbnail_every: expected whole seconds from 5 to 86400"), text)
            XCTAssertTrue(text.contains("mqtt.thumbnail_width: expected pixels from 32 to 1920"), text)
        }
        XCTAssertThrowsError(try decode("url: mqtt://h\nthumbnail_width: 100")) { error in
            XCTAssertTrue("\(error)".contains("mqtt.thumbnail_width: a width needs 'thumbnail_every'"), "\(error)")
        }
        XCTAssertThrowsError(try decode("url: mqtt://h\nthumbnail_evry: 60")) { error in
            XCTAssertTrue("\(error)".contains("thumbnail_every"), "a near match is named: \(error)")
        }
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
        XCTAssertThrowsError(try decode(text, file: "m.yaml")) { error in
            let diagnostics = (error as? SceneValidationError)?.diagnostics ?? []
            let lines = diagnostics.map(\.description)
            XCTAssertTrue(lines.contains { $0.hasPrefix("m.yaml:2:8: mqtt.url:") && $0.contains("mqtt:// or mqtts://") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.hasPrefix("m.yaml:3:14: mqtt.keepalive:") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.hasPrefix("m.yaml:4:3: mqtt.grop:") && $0.contains("did you mean 'group'") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("unknown event 'flips'") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("'subscribe' works only on the control socket") }, "\(lines)")
            XCTAssertTrue(lines.contains { $0.contains("a password needs 'username'") }, "\(lines)")
        }
    }

    /// `allow` checks names against `ControlCommandName`, the registry's own list; a command's older name
    /// (`display.power` for `output.power`) allows it, under its own name, and a misspelt one is named with the
    /// nearest command.
    func testAllowTakesEveryCommandAndTheOlderOutputNames() throws {
        let every = ControlCommandName.allCases.filter { ![.subscribe, .unsubscribe].contains($0) }.map(\.rawValue)
        XCTAssertEqual(try decode("url: mqtt://h\nallow: [\(every.joined(separator: ", "))]").allowedCommands, Set(every))
        let old = try decode("url: mqtt://h\nallow: [display.power, display.info]")
        XCTAssertEqual(old.allowedCommands, ["output.power", "output.info"])
        XCTAssertThrowsError(try decode("url: mqtt://h\nallow: [ouput.power]", file: "m.yaml")) { error in
            let lines = ((error as? SceneValidationError)?.diagnostics ?? []).map(\.description)
            XCTAssertEqual(lines.count, 1, "\(lines)")
            XCTAssertTrue(lines.first?.hasPrefix("m.yaml:3:10: mqtt.allow: unknown command 'ouput.power'; did you mean 'output.power'?") == true,
                          "\(lines)")
        }
    }

    func testMissingURLAndBadPorts() {
        for (text, expected) in [("client_id: a", "missing 'url'"), ("url: mqtt://h:0", "port must be 1 to 65535"),
                                 ("url: mqtt://h:99999", "port must be 1 to 65535"), ("url: mqtt://u@h", "no path or user"),
                                 ("url: mqtt://:1883", "names no host"), ("[1, 2]", "expected a mapping"),
                                 ("url: mqtt://h\ntopic_prefix: a/#", "must not contain '+' or '#'"),
                                 ("url: mqtt://h\nca_file: /ca.pem", "TLS files need an mqtts:// url"),
                                 ("url: mqtts://h\ncert_file: /c.pem", "'cert_file' and 'key_file' go together")] {
            XCTAssertThrowsError(try decode(text), text) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(text): \(error)")
            }
        }
    }

    /// Files named in the section are relative to the config file's folder; an empty section is none; a
    /// misspelt section name gets the nearest one.
    func testPathsAreRelativeToTheConfigFileAndTheSectionIsNamed() throws {
        let settings = try decode("url: mqtts://h\nusername: k\npassword_file: mqtt.password\nca_file: certs/ca.pem\ncert_file: /abs/c.pem\nkey_file: c.key")
        XCTAssertEqual(settings.passwordFile, "/etc/kioskd/mqtt.password")
        XCTAssertEqual(settings.caFile, "/etc/kioskd/certs/ca.pem")
        XCTAssertEqual(settings.certFile, "/abs/c.pem")
        XCTAssertEqual(settings.keyFile, "/etc/kioskd/c.key")
        XCTAssertNil(try ConfigLoader.parse(data: Data("mqtt:\n".utf8), file: "f", baseDirectory: "/").config.mqtt)
        XCTAssertThrowsError(try ConfigLoader.parse(data: Data("mqt:\n  url: mqtt://h\n".utf8), file: "k.yaml", baseDirectory: "/")) { error in
            XCTAssertEqual((error as? SceneValidationError)?.diagnostics.map(\.description), ["k.yaml:1:1: mqt: unknown key 'mqt'; did you mean 'mqtt'?"])
        }
    }
}
