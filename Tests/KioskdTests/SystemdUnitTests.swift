import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// `systemd-analyze verify` on the shipped units. Only the binary's path is swapped for the built one, since
/// verify insists that ExecStart exists; every other line is checked as shipped, and any warning fails. The man
/// pages the units name come with the package, so they are not looked up here (`--man=no`).
final class SystemdUnitTests: XCTestCase {
    func testUnitsVerify() throws {
        let analyze = "/usr/bin/systemd-analyze"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: analyze), "scripts/setup-host installs systemd")
        let dir = try KioskdProcess.scratchDirectory("systemd-units")
        let units = repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("kioskd.service"), encoding: .utf8)
        XCTAssertTrue(service.contains("ExecStart=/usr/bin/kioskd run --keep-going"), service)
        XCTAssertTrue(service.contains("Sockets=kioskd.socket"), service)
        XCTAssertTrue(service.contains("RuntimeDirectoryPreserve=yes"), "stopping kioskd must not delete the socket unit's file")
        // DevicePolicy=closed would hide the board's hardware video decoders, and GStreamer's registry must be writable.
        XCTAssertTrue(service.contains("\nDeviceAllow=char-video4linux rw\n"), "V4L2 decoders reachable")
        XCTAssertTrue(service.contains("\nEnvironment=GST_REGISTRY_1_0=/var/lib/kioskd/"), "the registry under the state directory")
        XCTAssertTrue(service.contains("\nStateDirectory=kioskd "), "which is writable")
        XCTAssertTrue(service.contains("\nCacheDirectory=kioskd\n"), "the asset cache, $CACHE_DIRECTORY")
        try service.replacingOccurrences(of: "/usr/bin/kioskd", with: KioskdProcess.kioskdPath)
            .write(to: dir.appendingPathComponent("kioskd.service"), atomically: true, encoding: .utf8)
        let socket = try String(contentsOf: units.appendingPathComponent("kioskd.socket"), encoding: .utf8)
        for line in ["ListenStream=/run/kioskd/control.sock", "SocketMode=0660", "SocketGroup=kioskd", "DirectoryMode=0750",
                     "FileDescriptorName=control"] {
            XCTAssertTrue(socket.contains(line + "\n"), line)
        }
        try socket.write(to: dir.appendingPathComponent("kioskd.socket"), atomically: true, encoding: .utf8)

        let result = try runTool(analyze, ["verify", "--man=no", dir.appendingPathComponent("kioskd.socket").path,
                                           dir.appendingPathComponent("kioskd.service").path])
        XCTAssertEqual(result.status, 0, result.text)
        XCTAssertEqual(result.text, "", "no warnings")

        // The check is real: a unit with a bad value is reported.
        try socket.replacingOccurrences(of: "SocketMode=0660", with: "SocketMode=0669x")
            .write(to: dir.appendingPathComponent("kioskd.socket"), atomically: true, encoding: .utf8)
        let broken = try runTool(analyze, ["verify", "--man=no", dir.appendingPathComponent("kioskd.socket").path,
                                           dir.appendingPathComponent("kioskd.service").path])
        XCTAssertTrue(broken.text.contains("SocketMode") || broken.text.contains("mode value"), broken.text)
    }
}
