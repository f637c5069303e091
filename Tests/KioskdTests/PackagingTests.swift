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
/// verify insists that ExecStart exists; every other line is checked as shipped, and any warning fails.
final class SystemdUnitTests: XCTestCase {
    func testUnitsVerify() throws {
        let analyze = "/usr/bin/systemd-analyze"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: analyze), "scripts/setup-host installs systemd")
        let dir = try KioskdProcess.scratchDirectory("systemd-units")
        let units = repository.appendingPathComponent("systemd")
        let service = try String(contentsOf: units.appendingPathComponent("kioskd.service"), encoding: .utf8)
        XCTAssertTrue(service.contains("ExecStart=/usr/local/bin/kioskd run"), service)
        XCTAssertTrue(service.contains("Sockets=kioskd.socket"), service)
        XCTAssertTrue(service.contains("RuntimeDirectoryPreserve=yes"), "stopping kioskd must not delete the socket unit's file")
        try service.replacingOccurrences(of: "/usr/local/bin/kioskd", with: KioskdProcess.kioskdPath)
            .write(to: dir.appendingPathComponent("kioskd.service"), atomically: true, encoding: .utf8)
        let socket = try String(contentsOf: units.appendingPathComponent("kioskd.socket"), encoding: .utf8)
        for line in ["ListenStream=/run/kioskd/control.sock", "SocketMode=0660", "SocketGroup=kioskd", "DirectoryMode=0750"] {
            XCTAssertTrue(socket.contains(line + "\n"), line)
        }
        try socket.write(to: dir.appendingPathComponent("kioskd.socket"), atomically: true, encoding: .utf8)

        let result = try runTool(analyze, ["verify", dir.appendingPathComponent("kioskd.socket").path,
                                           dir.appendingPathComponent("kioskd.service").path])
        XCTAssertEqual(result.status, 0, result.text)
        XCTAssertEqual(result.text, "", "no warnings")

        // The check is real: a unit with a bad value is reported.
        try socket.replacingOccurrences(of: "SocketMode=0660", with: "SocketMode=0669x")
            .write(to: dir.appendingPathComponent("kioskd.socket"), atomically: true, encoding: .utf8)
        let broken = try runTool(analyze, ["verify", dir.appendingPathComponent("kioskd.socket").path,
                                           dir.appendingPathComponent("kioskd.service").path])
        XCTAssertTrue(broken.text.contains("SocketMode") || broken.text.contains("mode value"), broken.text)
    }
}
