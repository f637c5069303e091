import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskRuntime
import KioskTestSupport
import XCTest

/// The fbdev backend on a real framebuffer device: the VM flavour with the `vfb` module (`vfb_enable=1`, a
/// framebuffer in RAM) and no DRM card, run by its own step in scripts/test-all (never in the vkms boot, whose
/// DRM fbdev emulation also makes a /dev/fb0). KIOSKD_REQUIRE_FBDEV=1 turns a missing /dev/fb0, or a DRM card
/// beside it, into a failure; anywhere else these tests skip with the reason.
final class FbdevVMTests: XCTestCase {
    private let framebuffer = "/dev/fb0"

    override func setUpWithError() throws {
        let problem: String? = if access(framebuffer, F_OK) != 0 {
            "\(framebuffer) does not exist: vfb did not load (KIOSKD_VM_MODULES=vfb, KIOSKD_VM_MODULE_PARAMS=\"vfb vfb_enable=1 ...\")"
        } else if !DRMCard.cardPaths().isEmpty {
            "a DRM card exists (\(DRMCard.cardPaths().joined(separator: ", "))): this flavour has none"
        } else {
            nil
        }
        guard let problem else { return }
        if ProcessInfo.processInfo.environment["KIOSKD_REQUIRE_FBDEV"] == "1" {
            XCTFail("KIOSKD_REQUIRE_FBDEV=1 but \(problem)")
            throw XCTSkip("unreachable after failure")
        }
        throw XCTSkip("\(problem); these tests run in the vfb VM flavour (scripts/test-all's fbdev step)")
    }

    private static let stillScene = """
        background: "#102030"
        widgets:
          - {type: text, text: "fbdev kiosk", x: 4%, y: 4%, width: 60%, height: 14%, foreground: white}
          - {type: panel, x: 5%, y: 30%, width: 40%, height: 30%}
          - {type: progress, value: 0.6, x: 5%, y: 75%, width: 90%, height: 5%}
          - {type: qrcode, text: "https://example.com/kiosk", x: 62%, y: 28%, width: 30%, height: 40%}
        """

    private func writeScene(_ name: String) throws -> String {
        let path = try KioskdProcess.scratchDirectory(name).appendingPathComponent("scene.yaml")
        try Self.stillScene.write(to: path, atomically: true, encoding: .utf8)
        return path.path
    }

    /// vfb at 32 bits per pixel keeps red in the low byte (drivers/video/fbdev/vfb.c): read the framebuffer's bytes
    /// straight from the device file and reorder them into XRGB8888 here, independently of kioskd's converter.
    private func readFramebuffer(size: Size, lineLength: Int) throws -> [UInt8] {
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: framebuffer))
        defer { try? handle.close() }
        let raw = try XCTUnwrap(try handle.read(upToCount: lineLength * size.height))
        XCTAssertEqual(raw.count, lineLength * size.height)
        var out = [UInt8](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let s = y * lineLength + x * 4, d = (y * size.width + x) * 4
                out[d] = raw[s + 2]; out[d + 1] = raw[s + 1]; out[d + 2] = raw[s]; out[d + 3] = 0
            }
        }
        return out
    }

    /// Runs the still scene on `backend` until the frame with every layer rendered has flipped; returns the
    /// engine's statistics, the backend's front buffer then, and what `whileShown` read before the engine stopped
    /// (once kioskd lets go, the VT goes back to text mode and the console repaints the framebuffer).
    private func settle(_ backend: DisplayBackend, scene: String,
                        whileShown: () throws -> [UInt8]? = { nil }) throws -> (stats: EngineStats, front: [UInt8]?, read: [UInt8]?) {
        let loop = try MainLoop.epoll()
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: backend.info.mode.size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        let stage = try SceneStage(engine: engine, path: scene, clock: { WallTime(seconds: 1_700_000_000) })
        defer { withExtendedLifetime(stage) {} }
        try engine.start()
        defer { engine.stop() }
        let settled = loop.spin(seconds: 60) {
            engine.stats.rendersCompleted > 0 && engine.rendersInFlight == 0 && engine.transaction.pendingRenderCount == 0
                && !engine.hasPendingWork && engine.stats.framesFlipped > 0
        }
        XCTAssertTrue(settled, "the scene never settled: \(engine.stats)")
        return (engine.stats, backend.frontBufferSnapshot(), try whileShown())
    }

    func testTheFramebufferHoldsTheHeadlessRenderOfTheScene() throws {
        let scene = try writeScene("fbdev-still")
        let fbdev = try FbdevBackend(path: framebuffer)
        XCTAssertEqual(fbdev.info.commitAPI, .fbdev)
        XCTAssertEqual(fbdev.device.format.bitsPerPixel, 32, "the flavour loads vfb at 32 bpp: \(fbdev.device.format)")
        XCTAssertEqual(fbdev.device.format.red, .init(offset: 0, length: 8), "vfb keeps red in the low byte: \(fbdev.device.format)")
        XCTAssertEqual(fbdev.device.timing.refreshRate ?? 0, 59.94, accuracy: 0.1, "from vfb's 640x480@60 pixel clock")
        let size = fbdev.info.mode.size, lineLength = fbdev.device.lineLength
        let settled = try settle(fbdev, scene: scene) { try readFramebuffer(size: size, lineLength: lineLength) }
        XCTAssertGreaterThan(settled.stats.framesFlipped, 0)

        let onDevice = try XCTUnwrap(settled.read)
        let readBack = try XCTUnwrap(settled.front, "the backend reads the framebuffer back")
        let stride = size.width * 4
        XCTAssertEqual(compareImages(readBack, onDevice, size: size, strideA: stride, strideB: stride, tolerance: 0).differingPixels, 0,
                       "the backend's read-back widens the framebuffer as this test does")
        let headless = try HeadlessBackend(mode: OutputMode(width: size.width, height: size.height, refreshMilliHz: 60_000))
        let rendered = try XCTUnwrap(try settle(headless, scene: scene).front)
        let diff = compareImages(onDevice, rendered, size: size, strideA: stride, strideB: stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "/dev/fb0 vs the headless render of the same scene: \(diff)")
        // The comparison can fail: the scene is not a flat picture, so a black framebuffer would not match.
        let black = [UInt8](repeating: 0, count: onDevice.count)
        XCTAssertGreaterThan(compareImages(rendered, black, size: size, strideA: stride, strideB: stride, tolerance: 8).differingPixels,
                             size.width * size.height / 2)
    }

    /// `kioskd run` with no --backend on a board without a DRM card: auto picks /dev/fb0, every flip is paced at
    /// the refresh rate (never faster: vfb has no vblank at all), and the screenshot read back at exit is the
    /// headless render of the same scene.
    func testAutoPicksTheFramebufferAndPacesFlipsAtTheRefreshRate() throws {
        let scene = try writeScene("fbdev-auto")
        let dir = try KioskdProcess.scratchDirectory("fbdev-auto-run")
        let stats = dir.appendingPathComponent("stats.json"), shot = dir.appendingPathComponent("shot.png")
        let r = try KioskdProcess.run(["run", "--scene", scene, "--frames", "120", "--stats-out", stats.path,
                                       "--screenshot", shot.path], timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("no DRM card (/dev/dri/card*); using the framebuffer /dev/fb0"), r.stderr)
        let s = try KioskdProcess.readStats(stats)
        print("kioskd run (fbdev): frames_flipped=\(s["frames_flipped"] ?? "-") average_fps=\(s["average_fps"] ?? "-") missed_vblanks=\(s["missed_vblanks"] ?? "-") flip_interval_ms=\(s["flip_interval_ms"] ?? "-")")
        XCTAssertEqual(s["commit_api"] as? String, "fbdev")
        XCTAssertEqual(s["flip_pacing"] as? String, "timer", "vfb has no FBIO_WAITFORVSYNC")
        XCTAssertEqual(s["device"] as? String, framebuffer)
        XCTAssertEqual(s["mode"] as? String, "640x480@60")
        XCTAssertEqual(s["frames_flipped"] as? Int, 120)
        let interval = try XCTUnwrap(s["flip_interval_ms"] as? [String: Any])
        // Paced by the timer: no two flips closer than one 59.94 Hz period, whatever the load.
        XCTAssertGreaterThanOrEqual(interval["p50"] as? Double ?? 0, 16.0)
        XCTAssertLessThanOrEqual(s["average_fps"] as? Double ?? 1000, 60.5)

        let png = try readPNG(path: shot.path)
        let headlessShot = dir.appendingPathComponent("headless.png")
        let h = try KioskdProcess.run(["run", "--backend", "headless", "--mode", "640x480", "--scene", scene, "--frames", "120",
                                       "--screenshot", headlessShot.path], timeout: 120)
        XCTAssertEqual(h.status, 0, h.stderr)
        let expected = try readPNG(path: headlessShot.path)
        XCTAssertEqual(png.size, expected.size)
        let diff = compareImages(png.pixels, expected.pixels, size: png.size, strideA: png.stride, strideB: expected.stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "the fbdev screenshot vs the headless one: \(diff)")
    }

    /// vfb cannot blank: power off is refused with an error naming the device and errno, and the output goes on.
    func testAPowerChangeTheDriverRefusesIsAnErrorAndTheOutputGoesOn() throws {
        let fbdev = try FbdevBackend(path: framebuffer)
        let loop = try MainLoop.epoll()
        var flips = 0
        try fbdev.start(on: loop) { _ in flips += 1 }
        defer { fbdev.stop() }
        XCTAssertThrowsError(try fbdev.setPower(false)) { error in
            XCTAssertEqual("\(error)", "framebuffer /dev/fb0 (Virtual FB): power off (FBIOBLANK powerdown) failed: EINVAL (Invalid argument)")
        }
        XCTAssertTrue(fbdev.isPoweredOn)
        let buffer = try XCTUnwrap(fbdev.acquireBuffer())
        try fbdev.present(buffer, damage: nil)
        XCTAssertTrue(fbdev.isFlipPending)
        XCTAssertTrue(loop.spin { flips == 1 }, "the flip lands at the next tick")
        XCTAssertFalse(fbdev.isFlipPending)
        XCTAssertEqual(fbdev.flipPacing, .timer(reason: "FBIO_WAITFORVSYNC: ENOTTY (Inappropriate ioctl for device)"),
                       "vfb has no FBIO_WAITFORVSYNC: the timer paces it")
    }
}
