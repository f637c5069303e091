import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// `--mode` against vkms's real mode list, which has two 1920x1200 modes (DMT 59.88 Hz and reduced-blanking
/// 59.95 Hz) and only a 59.94 Hz 640x480.
final class ModeSelectionDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    private func chosen(_ text: String) throws -> OutputMode {
        let backend = try DRMBackend(options: DRMOptions(mode: try ModeRequest(validating: text)))
        return backend.info.mode
    }

    func testExactRatesPickTheirModeAndIntegerRatesTheNearest() throws {
        XCTAssertEqual(try chosen("1920x1200@59.88").exactDescription, "1920x1200@59.88")
        XCTAssertEqual(try chosen("1920x1200@59.95").exactDescription, "1920x1200@59.95")
        XCTAssertEqual(try chosen("1920x1200@60").exactDescription, "1920x1200@59.95")
        XCTAssertEqual(try chosen("640x480@60").exactDescription, "640x480@59.94")
        XCTAssertEqual(try chosen("4096x2160@59.94").exactDescription, "4096x2160@59.94")
        XCTAssertEqual(try chosen("4096x2160@60").exactDescription, "4096x2160@60.00")
    }

    func testTheChosenModeIsTheOneSetOnTheCRTC() throws {
        let backend = try DRMBackend(options: DRMOptions(mode: try ModeRequest(validating: "1920x1200@59.88")))
        let loop = try MainLoop.epoll()
        var flips = 0
        try backend.start(on: loop) { _ in flips += 1 }
        defer { backend.stop() }
        let buffer = try XCTUnwrap(backend.acquireBuffer())
        XCTAssertEqual(buffer.size, Size(width: 1920, height: 1200))
        try backend.present(buffer, damage: nil)
        XCTAssertTrue(loop.spin { flips == 1 }, "the first flip at 1920x1200@59.88 completes")

        let card = try DRMCard(path: "/dev/dri/card0")
        let crtcMode = try XCTUnwrap(DRMResources(card: card).crtcs.compactMap(\.mode).first, "a CRTC is active")
        XCTAssertEqual(crtcMode.raw.clock, 193_250, "the DMT timing, not the reduced-blanking one")
        XCTAssertEqual(crtcMode.mode.exactDescription, "1920x1200@59.88")
    }

    func testAFarRateIsRefusedWithTheExactRatesOnOffer() {
        XCTAssertThrowsError(try chosen("1920x1200@50")) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("mode 1920x1200@50 not offered by connector Virtual-1"), message)
            XCTAssertTrue(message.contains("1920x1200@59.88, 1920x1200@59.95"), message)
        }
    }
}
