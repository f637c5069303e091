import Foundation
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// The fbdev backend on the DRM core's fbdev emulation of vkms (`/dev/fb0`, which the vkms VM has unless
/// KIOSKD_VM_FBDEV=0): a framebuffer driver that has FBIO_WAITFORVSYNC (the emulation waits for the CRTC's
/// vblank), so flips are paced by the vsync rather than the timer. Runs in the vkms boot.
final class FbdevEmulationDRMTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDRMDevice()
        if access("/dev/fb0", F_OK) != 0 {
            let message = "/dev/fb0 does not exist: the vkms VM was booted with KIOSKD_VM_FBDEV=0"
            if ProcessInfo.processInfo.environment["KIOSKD_REQUIRE_DRM"] == "1" { XCTFail(message) }
            throw XCTSkip(message)
        }
    }

    func testFlipsArePacedByTheVsyncWhereTheDriverHasIt() throws {
        let fbdev = try FbdevBackend(path: "/dev/fb0")
        XCTAssertEqual(fbdev.device.format, .xrgb8888, "DRM's fbdev emulation on vkms is XRGB8888")
        let loop = try MainLoop.epoll()
        var events: [FlipEvent] = []
        try fbdev.start(on: loop) { events.append($0) }
        defer { fbdev.stop() }
        var failure: Error?
        func presentNext() {
            guard let buffer = fbdev.acquireBuffer() else { return }
            fill(buffer, UInt32(0x0040_0000 | (events.count * 8 & 0xFF)))
            do { try fbdev.present(buffer, damage: nil) } catch { failure = error }
        }
        presentNext()
        XCTAssertTrue(loop.spin(seconds: 60) {
            if !fbdev.isFlipPending, failure == nil, events.count < 30 { presentNext() }
            return events.count >= 30 || failure != nil
        }, "30 flips")
        XCTAssertNil(failure)
        XCTAssertEqual(fbdev.flipPacing, .vblank, "FBIO_WAITFORVSYNC answered")
        let frame = fbdev.info.mode.frameDuration.nanosecondsClamped
        for (previous, next) in zip(events, events.dropFirst()) {
            XCTAssertGreaterThan(next.sequence, previous.sequence)
            // Each flip waited for a vsync after the one before: never two within half a refresh period.
            XCTAssertGreaterThan((next.timestamp - previous.timestamp).nanosecondsClamped, frame / 2)
        }
        // What the last flip showed is in the framebuffer.
        let front = try XCTUnwrap(fbdev.frontBufferSnapshot())
        let expected = UInt32(0x0040_0000 | ((events.count - 1) * 8 & 0xFF))
        XCTAssertEqual(front.withUnsafeBytes { $0.load(as: UInt32.self) }, expected)
    }
}
