import Foundation
import KioskTestSupport
import XCTest

/// `kioskd` as a user runs it, on the headless backend and with bad arguments: exit codes, one-line errors,
/// stats files and screenshots.
final class KioskdHeadlessCLITests: XCTestCase {
    func testHeadlessRunFlipsFramesWritesStatsAndScreenshot() throws {
        let dir = try KioskdProcess.scratchDirectory("headless-run")
        let stats = dir.appendingPathComponent("stats.json"), png = dir.appendingPathComponent("shot.png")
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--mode", "640x480@60", "--frames", "30",
                                       "--stats-out", stats.path, "--screenshot", png.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 30)
        XCTAssertEqual(s["commit_api"] as? String, "headless")
        XCTAssertEqual(s["flip_pacing"] as? String, "vblank")
        XCTAssertEqual(s["mode"] as? String, "640x480@60")
        XCTAssertEqual(s["connector"] as? String, "Headless-1")
        XCTAssertEqual(s["buffers"] as? Int, 2)
        XCTAssertNotNil(s["missed_vblanks"] as? Int)
        let interval = try XCTUnwrap(s["flip_interval_ms"] as? [String: Any])
        for key in ["p50", "p99", "max"] { XCTAssertNotNil(interval[key] as? Double, key) }
        let pngData = try Data(contentsOf: png)
        XCTAssertEqual(Array(pngData.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG file")
    }

    func testSIGTERMStopsAtAFrameBoundaryAndExitsZero() throws {
        let dir = try KioskdProcess.scratchDirectory("headless-sigterm")
        let stats = dir.appendingPathComponent("stats.json")
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--stats-out", stats.path])
        // Wait until it has flipped more than ten frames, then ask it to stop.
        try ControlEventStream(daemon, events: ["flip"]).waitFor(11, events: "flip", timeout: 20)
        let r = daemon.stop()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("SIGTERM: stopping at the next frame boundary"), r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertGreaterThan(s["frames_flipped"] as? Int ?? 0, 10)
    }

    func testBadArgumentsGiveOneLineNamingTheProblem() throws {
        let missing = try KioskdProcess.run(["run", "--device", "/dev/dri/card9"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errorLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("/dev/dri/card9") && missing.stderr.contains("ENOENT") && missing.stderr.contains("available:"),
                      missing.stderr)

        let buffers = try KioskdProcess.run(["run", "--backend", "headless", "--buffers", "4"])
        XCTAssertNotEqual(buffers.status, 0)
        XCTAssertTrue(buffers.stderr.contains("--buffers 4: must be 2 or 3"), buffers.stderr)

        let mode = try KioskdProcess.run(["run", "--mode", "big"])
        XCTAssertNotEqual(mode.status, 0)
        XCTAssertTrue(mode.stderr.contains("mode 'big': no 'x' between width and height"), mode.stderr)

        let commit = try KioskdProcess.run(["run", "--commit", "sometimes"])
        XCTAssertNotEqual(commit.status, 0)
        XCTAssertTrue(commit.stderr.contains("atomic") && commit.stderr.contains("legacy"), commit.stderr)

        let rotation = try KioskdProcess.run(["run", "--backend", "headless", "--rotation", "45", "--frames", "1"])
        XCTAssertNotEqual(rotation.status, 0)
        XCTAssertTrue(rotation.stderr.contains("--rotation") && rotation.stderr.contains("0, 90, 180, 270"), rotation.stderr)
    }

    func testAFramebufferThatCannotBeDrivenIsOneLineNamingIt() throws {
        let missing = try KioskdProcess.run(["run", "--backend", "fbdev", "--fbdev", "/dev/fb9"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errorLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("framebuffer /dev/fb9: open failed: ENOENT"), missing.stderr)

        // A file that is not a framebuffer device answers the mode ioctls with ENOTTY.
        let notDevice = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-not-fb-\(getpid())").path
        XCTAssertTrue(FileManager.default.createFile(atPath: notDevice, contents: Data(count: 64)))
        defer { try? FileManager.default.removeItem(atPath: notDevice) }
        let plain = try KioskdProcess.run(["run", "--backend", "fbdev", "--fbdev", notDevice])
        XCTAssertEqual(plain.status, 1)
        XCTAssertEqual(plain.errorLines.count, 1, plain.stderr)
        XCTAssertTrue(plain.stderr.contains("framebuffer \(notDevice): reading its mode (FBIOGET_FSCREENINFO/VSCREENINFO) failed: ENOTTY"), plain.stderr)

        let capture = try KioskdProcess.run(["run", "--backend", "fbdev", "--capture", "/tmp/x.png", "--frames", "1"])
        XCTAssertNotEqual(capture.status, 0)
        XCTAssertTrue(capture.stderr.contains("--capture needs --backend drm"), capture.stderr)
        for (args, needle) in [(["--backend", "headless"], "--capture-pages needs --backend drm"),
                               (["--commit", "legacy"], "--capture-pages needs atomic commits")] {
            let pages = try KioskdProcess.run(["run", "--capture-pages", "/tmp/kioskd-pages"] + args + ["--frames", "1"])
            XCTAssertNotEqual(pages.status, 0)
            XCTAssertTrue(pages.stderr.contains(needle), pages.stderr)
        }
    }

    func testDevicesWithoutCardsSaysSo() throws {
        let r = try KioskdProcess.run(["devices", "--directory", "/nonexistent-dri"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("no DRM devices"), r.stdout)
    }
}
