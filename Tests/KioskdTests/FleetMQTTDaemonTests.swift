import Foundation
import KioskScene
import KioskTestSupport
import XCTest

/// kioskd, the executable, with a config file's `mqtt:` section against a real Mosquitto broker on a loopback port:
/// end to end from the command line to the broker, the last will a killed kioskd leaves, and the MQTT settings that
/// stop kioskd (or that `check-config` refuses) with located errors. The fleet's behaviour is tested in process
/// (KioskAppTests' FleetMQTTTests).
final class FleetMQTTDaemonTests: XCTestCase {
    private var broker: MosquittoBroker!
    private var daemons: [ControlledKioskd] = []
    private let prefix = "kioskd/test-kiosk"

    override func setUpWithError() throws {
        broker = try MosquittoBroker()
    }

    override func tearDownWithError() throws {
        for daemon in daemons { daemon.stop() }
        daemons = []
        broker = nil
    }

    /// Starts kioskd with the default scene and a config file whose `mqtt:` section has the broker's url and the prefix.
    private func startKiosk() throws -> ControlledKioskd {
        let config = broker.directory + "/mqtt-\(daemons.count).yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nclient_id: kiosk-\(daemons.count)\n", to: config)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--config", config])
        daemons.append(daemon)
        return daemon
    }

    func testKillNineTurnsStatusOfflineThroughTheLastWill() throws {
        let daemon = try startKiosk()
        let status = try broker.subscribe(["\(prefix)/status"])
        try status.waitFor(on: "\(prefix)/status") { $0 == "online" }
        daemon.process.signal(SIGKILL)
        try status.waitFor(on: "\(prefix)/status") { $0 == "offline" }
    }

    func testAnInvalidMQTTConfigStopsKioskdWithLocatedErrors() throws {
        let config = broker.directory + "/bad.yaml"
        try "mqtt:\n  url: tcp://127.0.0.1:1\n  allow: [ping, nonsense]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["run", "--backend", "headless", "--socket", broker.directory + "/c.sock", "--config", config], timeout: 60)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("\(config):2:8: mqtt.url: 'tcp://127.0.0.1:1' must start with mqtt:// or mqtts://"), result.stderr)

        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  allow: [ping, nonsense]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let unknown = try KioskdProcess.run(["run", "--backend", "headless", "--socket", broker.directory + "/c.sock", "--config", config], timeout: 60)
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("\(config):3:10: mqtt.allow: unknown command 'nonsense'; known: animate, "), unknown.stderr)
        // check-config names it too, with the nearest command when there is one.
        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  allow: [ping, page.shw]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let misspelt = try KioskdProcess.run(["check-config", config])
        XCTAssertEqual(misspelt.status, 1)
        XCTAssertEqual(misspelt.errorLines.count, 1, misspelt.stderr)
        XCTAssertTrue(misspelt.errorLines.first?.hasPrefix("\(config):3:10: mqtt.allow: unknown command 'page.shw'; did you mean 'page.show'?") == true,
                      misspelt.stderr)
        // Every command kioskd knows may be allowed: the list check-config uses is the registry's (a debug kioskd
        // also asserts it at start).
        let everything = MQTTSettings.knownCommands.filter { !MQTTSettings.neverAllowed.contains($0) }
        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  allow: [\(everything.joined(separator: ", "))]\n".write(toFile: config, atomically: true, encoding: .utf8)
        XCTAssertEqual(try KioskdProcess.run(["check-config", config]).status, 0)
        let all = try KioskdProcess.run(["run", "--backend", "headless", "--socket", broker.directory + "/c.sock", "--config", config,
                                         "--frames", "3"], timeout: 60)
        XCTAssertEqual(all.status, 0, all.stderr)
        // check-config finds the same located errors without starting anything.
        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  grop: [lobby]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let checked = try KioskdProcess.run(["check-config", config])
        XCTAssertEqual(checked.status, 1)
        XCTAssertEqual(checked.errorLines, ["\(config):3:3: mqtt.grop: unknown key 'grop'; did you mean 'group'?"])
    }
}
