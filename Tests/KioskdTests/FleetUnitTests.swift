import Foundation
import KioskTestSupport
import XCTest

/// The MQTT drop-in: it verifies with the shipped unit, it opens exactly the network (and nothing more), and the
/// unit without it stays network-free.
final class FleetUnitTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testTheMQTTDropInVerifiesAndOnlyOpensTheNetwork() throws {
        let units = repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("kioskd.service"), encoding: .utf8)
        // udev's netlink reaches the default unit (input and display hotplug), IP does not.
        XCTAssertTrue(service.contains("\nIPAddressDeny=any\n") && service.contains("\nRestrictAddressFamilies=AF_UNIX AF_NETLINK\n")
                      && !service.contains("AF_INET"), "the default unit stays network-free")
        let dropIn = try String(contentsOf: units.appendingPathComponent("kioskd-mqtt.conf"), encoding: .utf8)
        let settings = dropIn.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("=") }.map(String.init)
        // The unit's own command line stays: kioskd finds the mqtt section in /etc/kioskd/kioskd.yaml.
        XCTAssertEqual(settings, ["RestrictAddressFamilies=AF_INET AF_INET6", "IPAddressAllow=any"])

        let dir = try KioskdProcess.scratchDirectory("systemd-mqtt-units")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("kioskd.service.d"), withIntermediateDirectories: true)
        let built = { (text: String) in text.replacingOccurrences(of: "/usr/bin/kioskd", with: KioskdProcess.kioskdPath) }
        try built(service).write(to: dir.appendingPathComponent("kioskd.service"), atomically: true, encoding: .utf8)
        try String(contentsOf: units.appendingPathComponent("kioskd.socket"), encoding: .utf8)
            .write(to: dir.appendingPathComponent("kioskd.socket"), atomically: true, encoding: .utf8)
        let dropInPath = dir.appendingPathComponent("kioskd.service.d/mqtt.conf")
        try built(dropIn).write(to: dropInPath, atomically: true, encoding: .utf8)
        let verify = { try runTool("/usr/bin/systemd-analyze", ["verify", "--man=no", dir.appendingPathComponent("kioskd.socket").path,
                                                                  dir.appendingPathComponent("kioskd.service").path]) }
        let result = try verify()
        XCTAssertEqual(result.status, 0, result.text)
        XCTAssertEqual(result.text, "", "no warnings")
        // The drop-in is really read: a bad value in it is reported.
        try built(dropIn).replacingOccurrences(of: "IPAddressAllow=any", with: "IPAddressAllow=nowhere")
            .write(to: dropInPath, atomically: true, encoding: .utf8)
        let line = try XCTUnwrap(dropIn.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("IPAddressAllow=") }) + 1
        let refused = try verify().text
        XCTAssertTrue(refused.contains("mqtt.conf:\(line):") && refused.contains("nowhere"), "the drop-in was not read: \(refused)")
    }
}
