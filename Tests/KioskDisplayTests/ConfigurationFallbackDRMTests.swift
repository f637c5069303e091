import CDRM
import Glibc
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// The fallback after a refused configuration (EINVAL, ENOSPC at commit) on a real device: each step the DRM
/// backend chooses is really set (the CRTC reports its mode) and flips. The refusal itself is given to `fallBack`
/// as the engine would pass it; vkms takes every configuration, so nothing here is refused by the kernel.
final class ConfigurationFallbackDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// Presents one frame and waits for its flip.
    private func flipOnce(_ backend: DRMBackend, _ loop: MainLoop, colour: UInt32, file: StaticString = #filePath, line: UInt = #line) throws {
        let buffer = try XCTUnwrap(backend.acquireBuffer(), file: file, line: line)
        fill(buffer, colour)
        try backend.present(buffer, damage: nil)
        XCTAssertTrue(loop.spin { !backend.isFlipPending }, "the flip completed", file: file, line: line)
    }

    /// The mode the CRTC is set to now, read back from the kernel.
    private func crtcMode(_ backend: DRMBackend) throws -> OutputMode? {
        try DRMResources(card: backend.card).crtc(id: backend.plan.crtc.id)?.mode?.mode
    }

    /// vkms offers 1024x768 (preferred) at 60 Hz only, so the mode step (the requested mode to the preferred one
    /// of the same size) has no candidate here; it is covered with `FaultInjectingBackend` on the host. What the
    /// device shows: the commit API falls back with the requested mode kept, a preferred mode of another size is
    /// no fallback, and the walk ends with an error naming the errno.
    func testAtomicFallsBackToLegacyKeepingTheRequestedModeAndAPreferredModeOfAnotherSizeIsNoFallback() throws {
        let modes: [DRMResources.Mode]
        do {
            let probe = try DRMBackend(options: DRMOptions(commit: .atomic))
            modes = probe.plan.connector.modes
        }
        let preferred = try XCTUnwrap(modes.first { $0.mode.isPreferred }).mode
        let other = try XCTUnwrap(modes.first {
            $0.mode.size != preferred.size && $0.raw.flags & UInt32(DRM_MODE_FLAG_INTERLACE) == 0
        }, "a mode of another size than \(preferred)").mode

        let request = ModeRequest(width: other.width, height: other.height, refreshMilliHz: other.refreshMilliHz)
        let backend = try DRMBackend(options: DRMOptions(mode: request, commit: .atomic))
        XCTAssertEqual(backend.info.mode, other)
        let loop = try MainLoop.epoll()
        try backend.start(on: loop) { _ in }
        defer { backend.stop() }
        try flipOnce(backend, loop, colour: 0xFF0000)

        let refused = PresentFailure(errno: EINVAL, message: "connector \(backend.info.connector): atomic page flip failed: EINVAL")
        XCTAssertEqual(try backend.fallBack(after: refused), OutputConfiguration(.legacy, other).description)
        XCTAssertEqual(backend.info.commitAPI, .legacy)
        XCTAssertEqual(backend.info.mode, other, "the requested mode is kept")
        XCTAssertEqual(try crtcMode(backend)?.size, other.size, "the CRTC was set again with legacy SetCrtc")
        try flipOnce(backend, loop, colour: 0x00FF00)
        try flipOnce(backend, loop, colour: 0x0000FF)

        XCTAssertThrowsError(try backend.fallBack(after: refused)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("nothing left to fall back to"), message)
            XCTAssertTrue(message.contains("EINVAL"), message)
            XCTAssertEqual((error as? OutputError)?.errno, EINVAL)
        }
        XCTAssertEqual(backend.info.mode.size, other.size, "the size never changes under the compositor")
    }
}
