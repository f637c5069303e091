import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// The shell completion scripts in `completions/` are what the current kioskctl generates, so they cannot go
/// stale: regenerate them with `kioskctl --generate-completion-script SHELL` when this fails.
final class CompletionScriptTests: XCTestCase {
    func testCommittedScriptsEqualWhatKioskctlGenerates() throws {
        let kioskctl = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl").path
        for (shell, file) in [("bash", "kioskctl.bash"), ("zsh", "_kioskctl"), ("fish", "kioskctl.fish")] {
            let generated = try runTool(kioskctl, ["--generate-completion-script", shell])
            XCTAssertEqual(generated.status, 0, generated.text)
            XCTAssertTrue(generated.text.contains("screenshot") && generated.text.contains("animate"), "\(shell) covers the subcommands")
            let committed = try String(contentsOf: repository.appendingPathComponent("completions/\(file)"), encoding: .utf8)
            XCTAssertEqual(committed, generated.text,
                           "completions/\(file) is stale: kioskctl --generate-completion-script \(shell) > completions/\(file)")
        }
    }
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

/// The service's sandbox, scored by `systemd-analyze security` offline (no running systemd needed): at most 2.0,
/// and the README states the score the unit has.
final class SystemdSecurityTests: XCTestCase {
    func testServiceExposureIsAtMostTwo() throws {
        let dir = try KioskdProcess.scratchDirectory("systemd-security")
        let units = repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("kioskd.service"), encoding: .utf8)
        for line in ["Type=notify", "User=kioskd", "SupplementaryGroups=video render input", "CapabilityBoundingSet=\n",
                     "SystemCallFilter=@system-service", "ProtectClock=yes", "ProtectHostname=yes", "RestrictRealtime=yes",
                     "UMask=0077", "WatchdogSec=", "ExecReload="] {
            XCTAssertTrue(service.contains(line), "kioskd.service has \(line)")
        }
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
