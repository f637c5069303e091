import Foundation
import KioskTestSupport
import XCTest

/// kioskd as the unit runs it: an unprivileged user with the card's group and no capabilities at all still
/// becomes DRM master (the first opener of a card with no master, Linux 5.8+) and flips frames.
final class UnprivilegedDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testNonRootWithoutCapabilitiesBecomesMasterAndFlips() throws {
        let card = "/dev/dri/card0"
        var original = stat()
        XCTAssertEqual(stat(card, &original), 0, "\(card): errno \(errno)")
        // What udev does on a board: the card belongs to group video, mode 0660. The VM's /dev is throwaway.
        let video = try XCTUnwrap(getgrnam("video")?.pointee.gr_gid, "group video exists")
        XCTAssertEqual(chown(card, 0, video), 0)
        XCTAssertEqual(chmod(card, 0o660), 0)
        defer {
            _ = chown(card, original.st_uid, original.st_gid)
            _ = chmod(card, original.st_mode & 0o7777)
        }
        // A folder the unprivileged user may write its statistics into.
        var template = Array("/tmp/kioskd-unprivileged-XXXXXX".utf8CString)
        let directory = String(cString: try XCTUnwrap(mkdtemp(&template)))
        XCTAssertEqual(chmod(directory, 0o1777), 0)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stats = directory + "/stats.json"

        let nobody = try XCTUnwrap(getpwnam("nobody")?.pointee.pw_uid)
        let nogroup = try XCTUnwrap(getgrnam("nogroup")?.pointee.gr_gid)
        let result = try runTool("/usr/bin/setpriv", [
            "--reuid=\(nobody)", "--regid=\(nogroup)", "--groups=\(video)", "--inh-caps=-all", "--bounding-set=-all",
            "--no-new-privs", KioskdProcess.kioskdPath, "run", "--backend", "drm", "--frames", "60", "--socket", "none",
            "--scene", "default", "--stats-out", stats,
        ])
        XCTAssertEqual(result.status, 0, result.text)
        let report = try KioskdProcess.readStats(URL(fileURLWithPath: stats))
        XCTAssertEqual(report["frames_flipped"] as? Int, 60)

        // The check is real: without the card's group the same user cannot open it.
        let denied = try runTool("/usr/bin/setpriv", [
            "--reuid=\(nobody)", "--regid=\(nogroup)", "--clear-groups", "--bounding-set=-all", "--no-new-privs",
            KioskdProcess.kioskdPath, "run", "--backend", "drm", "--frames", "5", "--socket", "none", "--scene", "default",
        ])
        XCTAssertNotEqual(denied.status, 0)
        XCTAssertTrue(denied.text.contains("/dev/dri/card0 (cannot open"), denied.text)
    }
}

/// Runs a tool to completion; its stdout and stderr together.
private func runTool(_ path: String, _ arguments: [String]) throws -> (status: Int32, text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-tool-\(UUID().uuidString)")
    FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let handle = try FileHandle(forWritingTo: output)
    process.standardOutput = handle
    process.standardError = handle
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = ProcessDeadline(process, seconds: 120)
    process.waitUntilExit()
    try deadline.finish("\(path) \(arguments.joined(separator: " "))")
    try handle.close()
    return (process.terminationStatus, try String(contentsOf: output, encoding: .utf8))
}
