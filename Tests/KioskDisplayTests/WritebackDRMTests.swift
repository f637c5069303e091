import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// Reads back, through vkms's writeback connector, what the CRTC actually scanned out, and compares it with the
/// frame kioskd drew.
final class WritebackDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testWritebackEqualsTheDrawnFrames() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic, bufferCount: 2))
        let capturer = try WritebackCapturer(backend: backend)
        XCTAssertTrue(capturer.connector.name.hasPrefix("Writeback"), capturer.connector.name)
        try backend.start(on: loop) { _ in }
        defer { backend.stop() }
        let size = backend.info.mode.size
        let seeds = [0, 37]
        var drawn: [[UInt8]] = []
        var captured: [[UInt8]] = []
        for seed in seeds {
            let buffer = try XCTUnwrap(backend.acquireBuffer())
            drawPattern(into: buffer, seed: seed)
            drawn.append(snapshot(buffer))
            let capture = try capturer.presentCapturing(buffer)
            XCTAssertTrue(loop.spin { !backend.isFlipPending })
            captured.append(try capture.waitForPixels())
        }
        for i in seeds.indices {
            let diff = compareImages(captured[i], drawn[i], size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "frame \(i): writeback differs from what was drawn: \(diff)")
        }
        // The two frames differ, so the comparison above could have failed: a wrong expectation (frame 0's
        // capture against frame 1's drawing) does fail.
        let wrong = compareImages(captured[0], drawn[1], size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
        XCTAssertGreaterThan(wrong.differingPixels, 1000, "a wrong expectation must not pass: \(wrong)")
    }

    /// A picture that depends on `seed` everywhere: a gradient with a light band that moves with the seed.
    private func drawPattern(into buffer: PixelBuffer, seed: Int) {
        for y in 0..<buffer.size.height {
            for x in 0..<buffer.size.width {
                let band = (x + seed * 7) % 64 < 12
                let word: UInt32 = band ? 0xFFF0_F0F0
                    : UInt32(truncatingIfNeeded: 0xFF00_0000 | (((x + y) * 2 + seed * 11) & 0xFF) << 16 | ((y * 5) & 0xFF) << 8 | ((x * 3 + seed) & 0xFF))
                buffer.base.storeBytes(of: word, toByteOffset: y * buffer.stride + x * 4, as: UInt32.self)
            }
        }
    }

    /// `WritebackReadback`, scanout verification's readback: the next present is captured, its out-fence watched by
    /// the loop (no blocking wait) and its pixels copied off the loop; they are the frame presented. The capture's
    /// buffer is let go once read.
    func testReadbackOfTheNextPresentIsTheFramePresented() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic, bufferCount: 2))
        let capturer = try WritebackCapturer(backend: backend)
        let readback = try WritebackReadback(capturer: capturer, loop: loop, outputName: backend.info.connector)
        try backend.start(on: loop) { _ in }
        defer { backend.stop() }
        var result: Result<[UInt8], OutputError>?
        try readback.readBackNextPresent(timeout: .seconds(2)) { result = $0 }
        let buffer = try XCTUnwrap(backend.acquireBuffer())
        drawPattern(into: buffer, seed: 5)
        let drawn = snapshot(buffer)
        try backend.present(buffer, damage: nil)
        XCTAssertTrue(loop.spin { result != nil }, "the readback came back through the loop")
        let pixels = try XCTUnwrap(result).get()
        let size = backend.info.mode.size
        let diff = compareImages(pixels, drawn, size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
        XCTAssertNil(capturer.lastCapture, "the capture's buffer is let go once read")
    }

    func testWritebackNeedsAtomic() throws {
        let backend = try DRMBackend(options: DRMOptions(commit: .legacy))
        XCTAssertThrowsError(try WritebackCapturer(backend: backend)) { error in
            XCTAssertTrue("\(error)".contains("atomic"), "\(error)")
        }
    }

    /// The connector is routed at modeset, so a capturer attaches before `start`, and only one rides along; it
    /// counts presents from `start`.
    func testACapturerAttachesOnceBeforeStartAndCountsPresents() throws {
        let loop = try MainLoop.epoll()
        do {
            // Closed at the end of this scope: one backend holds DRM master at a time.
            let late = try DRMBackend(options: DRMOptions(commit: .atomic))
            try late.start(on: loop) { _ in }
            XCTAssertThrowsError(try WritebackCapturer(backend: late)) { error in
                XCTAssertTrue("\(error)".contains("before start"), "\(error)")
            }
            late.stop()
        }
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic))
        let capturer = try WritebackCapturer(backend: backend)
        XCTAssertThrowsError(try WritebackCapturer(backend: backend)) { error in
            XCTAssertTrue("\(error)".contains("already attached"), "\(error)")
        }
        try backend.start(on: loop) { _ in }
        defer { backend.stop() }
        try capturer.capturePresent(number: 2)
        for n in 1...2 {
            let buffer = try XCTUnwrap(backend.acquireBuffer())
            try backend.present(buffer, damage: nil)
            XCTAssertEqual(capturer.presentCount, n)
            XCTAssertEqual(capturer.lastCapture == nil, n == 1, "only the second present is captured")
            XCTAssertTrue(loop.spin { !backend.isFlipPending }, "flip \(n)")
        }
        let size = backend.info.mode.size
        XCTAssertEqual(try XCTUnwrap(capturer.lastCapture).waitForPixels().count, size.width * size.height * 4)
    }
}
