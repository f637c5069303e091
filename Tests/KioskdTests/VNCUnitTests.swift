import Foundation
import KioskTestSupport
import XCTest

/// The VNC drop-in: it verifies with the shipped unit, opens TCP on loopback and VNC's ports only, and is really read.
final class VNCUnitTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testTheVNCDropInVerifiesAndOpensOnlyVNCsPortsOnLoopback() throws {
        let units = repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("kioskd.service"), encoding: .utf8)
        XCTAssertFalse(service.contains("SocketBindAllow"), "the unit itself binds no TCP port")
        let dropIn = try String(contentsOf: units.appendingPathComponent("kioskd-vnc.conf"), encoding: .utf8)
        let settings = dropIn.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains("=") }.map(String.init)
        XCTAssertEqual(settings, ["RestrictAddressFamilies=AF_INET AF_INET6", "SocketBindAllow=tcp:5900-5903", "SocketBindDeny=any",
                                  "IPAddressAllow=localhost"])

        let dir = try KioskdProcess.scratchDirectory("systemd-vnc-units")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("kioskd.service.d"), withIntermediateDirectories: true)
        let built = { (text: String) in text.replacingOccurrences(of: "/usr/bin/kioskd", with: KioskdProcess.kioskdPath) }
        try built(service).write(to: dir.appendingPathComponent("kioskd.service"), atomically: true, encoding: .utf8)
        try String(contentsOf: units.appendingPathComponent("kioskd.socket"), encoding: .utf8)
            .write(to: dir.appendingPathComponent("kioskd.socket"), atomically: true, encoding: .utf8)
        let dropInPath = dir.appendingPathComponent("kioskd.service.d/vnc.conf")
        try built(dropIn).write(to: dropInPath, atomically: true, encoding: .utf8)
        let verify = { try runTool("/usr/bin/systemd-analyze", ["verify", "--man=no", dir.appendingPathComponent("kioskd.socket").path,
                                                                  dir.appendingPathComponent("kioskd.service").path]) }
        let result = try verify()
        XCTAssertEqual(result.status, 0, result.text)
        XCTAssertEqual(result.text, "", "no warnings")
        try built(dropIn).replacingOccurrences(of: "SocketBindAllow=tcp:5900-5903", with: "SocketBindAllow=ipv4:udp:nowhere")
            .write(to: dropInPath, atomically: true, encoding: .utf8)
        let line = try XCTUnwrap(dropIn.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("SocketBindAllow=") }) + 1
        let refused = try verify().text
        XCTAssertTrue(refused.contains("vnc.conf:\(line):") && refused.contains("nowhere"), "the drop-in was not read: \(refused)")
    }
}
