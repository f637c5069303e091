import CDRM
import Foundation
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// The `kioskd` binary on a real DRM device, as the issue's acceptance commands run it.
final class KioskdCLIDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    private func runFrames(commit: String, buffers: Int = 2) throws -> [String: Any] {
        let dir = try KioskdProcess.scratchDirectory("drm-\(commit)-\(buffers)")
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--frames", "300", "--commit", commit, "--buffers", "\(buffers)",
                                       "--stats-out", stats.path], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        print("kioskd run --commit \(commit) --buffers \(buffers): frames_flipped=\(s["frames_flipped"] ?? "-") missed_vblanks=\(s["missed_vblanks"] ?? "-") flip_interval_ms=\(s["flip_interval_ms"] ?? "-")")
        XCTAssertEqual(s["frames_flipped"] as? Int, 300)
        XCTAssertEqual(s["commit_api"] as? String, commit)
        XCTAssertEqual(s["flip_pacing"] as? String, "vblank", "vkms has a vblank")
        XCTAssertEqual(s["connector"] as? String, "Virtual-1")
        XCTAssertEqual(s["mode"] as? String, "1024x768@60")
        XCTAssertEqual(s["buffers"] as? Int, buffers)
        XCTAssertNotNil(s["missed_vblanks"] as? Int, "missed_vblanks is reported")
        let interval = try XCTUnwrap(s["flip_interval_ms"] as? [String: Any])
        // Flips happen on vblank: never faster than one 60 Hz period.
        XCTAssertGreaterThanOrEqual(interval["p50"] as? Double ?? 0, 16.0)
        return s
    }

    func testRun300FramesAtomic() throws { _ = try runFrames(commit: "atomic") }
    func testRun300FramesLegacy() throws { _ = try runFrames(commit: "legacy") }
    func testRun300FramesTripleBuffered() throws { _ = try runFrames(commit: "atomic", buffers: 3) }

    func testDevicesListsVirtual1ModesAndPlanes() throws {
        let r = try KioskdProcess.run(["devices"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("driver vkms"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Virtual-1"), r.stdout)
        XCTAssertTrue(r.stdout.contains("modes:\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("1024x768@60.00"), r.stdout)
        XCTAssertTrue(r.stdout.contains("primary") && r.stdout.contains("cursor") && r.stdout.contains("overlay"), r.stdout)
        XCTAssertTrue(r.stdout.contains("Writeback-1"), r.stdout)
    }

    func testBadChoicesExitNonZeroWithOneLine() throws {
        let cases: [([String], [String])] = [
            (["--device", "/dev/dri/card9"], ["/dev/dri/card9", "available: /dev/dri/card0"]),
            (["--mode", "123x45"], ["mode 123x45 not offered by connector Virtual-1", "1024x768@60.00"]),
            (["--mode", "1024x768@30"], ["mode 1024x768@30 not offered by connector Virtual-1", "1024x768@60.00"]),
            (["--connector", "NOPE"], ["connector NOPE not found", "Virtual-1 (connected)"]),
        ]
        for (args, needles) in cases {
            let r = try KioskdProcess.run(["run"] + args + ["--frames", "5"])
            XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)")
            XCTAssertEqual(r.errorLines.count, 1, "\(args): exactly one line: \(r.stderr)")
            for n in needles { XCTAssertTrue(r.stderr.contains(n), "\(args): missing \(n) in \(r.stderr)") }
            XCTAssertFalse(r.stderr.contains("Fatal error") || r.stderr.contains("Stack"), r.stderr)
        }
    }

    /// The writeback capture of the last frame equals what kioskd put in the scanout buffer for it, for the
    /// default scene, without and with the fps widget laid over it.
    func testCaptureEqualsScreenshotOfTheLastFrame() throws {
        for (name, extra) in [("default", [String]()), ("fps-overlay", ["--fps-overlay"])] {
            let scene = name
            let dir = try KioskdProcess.scratchDirectory("drm-capture-\(name)")
            let capture = dir.appendingPathComponent("capture.png"), shot = dir.appendingPathComponent("shot.png")
            let r = try KioskdProcess.run(["run", "--scene", "default", "--frames", "20", "--capture", capture.path,
                                           "--screenshot", shot.path] + extra, timeout: 120)
            XCTAssertEqual(r.status, 0, "\(scene): \(r.stderr)")
            let a = try readPNG(path: capture.path), b = try readPNG(path: shot.path)
            XCTAssertEqual(a.size, b.size)
            let diff = compareImages(a.pixels, b.pixels, size: a.size, strideA: a.stride, strideB: b.stride, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "\(scene): \(diff)")
        }
    }

    func testSIGTERMRestoresTheConsoleCRTC() throws {
        let before = try crtcBuffer()
        let dir = try KioskdProcess.scratchDirectory("drm-sigterm")
        let stats = dir.appendingPathComponent("stats.json")
        let daemon = try ControlledKioskd(["run", "--stats-out", stats.path], readyTimeout: 120)
        // Frames are slow to draw in an emulated debug build: wait for a few flips before looking and stopping.
        try ControlEventStream(daemon, events: ["flip"]).waitFor(3, events: "flip", timeout: 120)
        XCTAssertNotEqual(try crtcBuffer(), before, "kioskd's framebuffer is on screen while it runs")
        let r = daemon.stop()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertGreaterThan(try KioskdProcess.readStats(stats)["frames_flipped"] as? Int ?? 0, 0)
        XCTAssertEqual(try crtcBuffer(), before, "the CRTC shows what it showed before kioskd started")
    }

    private func crtcBuffer() throws -> UInt32? {
        let card = try DRMCard(path: DRMCard.cardPaths()[0])
        return try XCTUnwrap(DRMResources(card: card).crtcs.first).bufferID
    }
}
