import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// The service's sandbox, scored by `systemd-analyze security` offline (no running systemd needed): at most 2.0,
/// and the README states the score the unit has.
final class SystemdSecurityTests: XCTestCase {
    func testServiceExposureIsAtMostTwo() throws {
        let dir = try KioskdProcess.scratchDirectory("systemd-security")
        let units = repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("kioskd.service"), encoding: .utf8)
        for line in ["Type=notify", "User=kioskd", "SupplementaryGroups=video render input", "CapabilityBoundingSet=\n",
                     "SystemCallFilter=@system-service adjtimex clock_adjtime clock_adjtime64\n",
                     "SystemCallFilter=~settimeofday clock_settime clock_settime64\n", "ProtectHostname=yes", "RestrictRealtime=yes",
                     "UMask=0077", "WatchdogSec=", "ExecReload="] {
            XCTAssertTrue(service.contains(line), "kioskd.service has \(line)")
        }
        // ProtectClock=yes refuses adjtimex even to read, and kioskd reads the kernel's NTP state with it: the lines
        // above refuse what sets the clock instead (the service tier checks both under the installed unit).
        XCTAssertFalse(service.contains("\nProtectClock="), "kioskd.service sets no ProtectClock=")
        let unit = dir.appendingPathComponent("kioskd.service")
        try service.replacingOccurrences(of: "/usr/bin/kioskd", with: KioskdProcess.kioskdPath).write(to: unit, atomically: true, encoding: .utf8)
        let result = try runTool("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--no-pager", unit.path])
        let line = try XCTUnwrap(result.text.split(separator: "\n").first { $0.contains("Overall exposure level") }, result.text)
        let score = try XCTUnwrap(Double(try XCTUnwrap(line.firstMatch(of: /: ([0-9]+\.[0-9])/)?.1)), String(line))
        XCTAssertLessThanOrEqual(score, 2.0, String(line))
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("exposure level \(String(format: "%.1f", score))"), "README states the score \(score)")

        // The score is real: without the sandbox the same unit scores far worse.
        let bare = service.split(separator: "\n").filter { !$0.hasPrefix("Protect") && !$0.hasPrefix("SystemCall") && !$0.hasPrefix("Capability") && !$0.hasPrefix("Private") }
            .joined(separator: "\n").replacingOccurrences(of: "/usr/bin/kioskd", with: KioskdProcess.kioskdPath)
        try bare.write(to: unit, atomically: true, encoding: .utf8)
        let worse = try runTool("/usr/bin/systemd-analyze", ["security", "--offline=yes", "--no-pager", unit.path])
        let worseLine = try XCTUnwrap(worse.text.split(separator: "\n").first { $0.contains("Overall exposure level") }, worse.text)
        let worseScore = try XCTUnwrap(Double(try XCTUnwrap(worseLine.firstMatch(of: /: ([0-9]+\.[0-9])/)?.1)))
        XCTAssertGreaterThan(worseScore, score + 2)
    }
}
