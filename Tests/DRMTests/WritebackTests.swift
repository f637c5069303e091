import KioskCore
import KioskDisplay
import KioskRender
import XCTest

/// Reads back, through vkms's writeback connector, what the CRTC actually scanned out, and compares it with the
/// frame kioskd drew.
final class WritebackTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testWritebackEqualsTheDrawnFrames() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic, bufferCount: 2, enableWriteback: true))
        XCTAssertTrue(backend.writebackAvailable)
        try backend.start(on: loop) { _ in }
        defer { backend.stop() }
        let size = backend.info.mode.size
        let scene = DemoScene()
        let clocks = [DemoScene.Clock(hours: 9, minutes: 41, seconds: 0, date: "Monday 2 March"),
                      DemoScene.Clock(hours: 17, minutes: 5, seconds: 59, date: "Friday 13 November")]
        var drawn: [[UInt8]] = []
        var captured: [[UInt8]] = []
        for (i, clock) in clocks.enumerated() {
            let buffer = try XCTUnwrap(backend.acquireBuffer())
            try scene.draw(into: buffer, frame: i * 37, wallClock: clock, mode: backend.info.mode)
            drawn.append(snapshot(buffer))
            let capture = try backend.presentCapturing(buffer)
            XCTAssertTrue(loop.spin { !backend.isFlipPending })
            captured.append(try capture.waitForPixels())
        }
        for i in clocks.indices {
            let diff = compareImages(captured[i], drawn[i], size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "frame \(i): writeback differs from what was drawn: \(diff)")
        }
        // The two frames differ, so the comparison above could have failed: a wrong expectation (frame 0's
        // capture against frame 1's drawing) does fail.
        let wrong = compareImages(captured[0], drawn[1], size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
        XCTAssertGreaterThan(wrong.differingPixels, 1000, "a wrong expectation must not pass: \(wrong)")
    }

    func testWritebackNeedsAtomic() {
        XCTAssertThrowsError(try DRMBackend(options: DRMOptions(commit: .legacy, enableWriteback: true))) { error in
            XCTAssertTrue("\(error)".contains("atomic"), "\(error)")
        }
    }
}
