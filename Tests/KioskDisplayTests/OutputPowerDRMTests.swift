import CDRM
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// Display power on a real CRTC: off deactivates it (atomic: ACTIVE=0; legacy: connector DPMS Off), no flip
/// events come while it is dark, and on brings flips back with the current content on screen.
final class OutputPowerDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// A second, non-master handle on the card (opened after the backend took master), to read back what the
    /// kernel holds: the atomic client cap makes the CRTC's ACTIVE property visible.
    private func readBack() throws -> (crtcActive: UInt64?, dpms: UInt64?, crtcBuffer: UInt32?) {
        let card = try DRMCard(path: DRMCard.cardPaths()[0])
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        card.setClientCap(Int32(DRM_CLIENT_CAP_ATOMIC), 1)
        let res = try DRMResources(card: card)
        let crtc = try XCTUnwrap(res.crtcs.first)
        let connector = try XCTUnwrap(res.connectors.first { $0.name == "Virtual-1" })
        let crtcProps = DRMPropertyTable(fd: card.fd, objectID: crtc.id, objectType: UInt32(DRM_MODE_OBJECT_CRTC))
        let connectorProps = DRMPropertyTable(fd: card.fd, objectID: connector.id, objectType: UInt32(DRM_MODE_OBJECT_CONNECTOR))
        return (crtcProps["ACTIVE"]?.value, connectorProps["DPMS"]?.value, crtc.bufferID)
    }

    private func presentFilled(_ backend: DRMBackend, _ xrgb: UInt32, loop: MainLoop, capture capturer: WritebackCapturer? = nil) throws -> WritebackCapture? {
        let buffer = try XCTUnwrap(backend.acquireBuffer())
        fill(buffer, xrgb)
        var result: WritebackCapture?
        if let capturer {
            result = try capturer.presentCapturing(buffer)
        } else {
            try backend.present(buffer, damage: nil)
        }
        XCTAssertTrue(loop.spin { !backend.isFlipPending }, "the flip of \(String(xrgb, radix: 16)) never completed")
        return result
    }

    private func assertDarkForAWhile(_ backend: DRMBackend, loop: MainLoop, flips: () -> Int, file: StaticString = #filePath, line: UInt = #line) {
        let before = flips()
        // About 12 refresh periods at 60 Hz: any vblank-driven event would have arrived.
        _ = loop.spin(seconds: 0.2) { false }
        XCTAssertEqual(flips(), before, "no flip events while the output is off", file: file, line: line)
        XCTAssertFalse(backend.isFlipPending, file: file, line: line)
    }

    func testAtomicPowerOffDeactivatesTheCRTCAndPowerOnResumesFlips() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic))
        let capturer = try WritebackCapturer(backend: backend)
        var flips = 0
        try backend.start(on: loop) { _ in flips += 1 }
        defer { backend.stop() }
        _ = try presentFilled(backend, 0x336699, loop: loop)
        XCTAssertEqual(try readBack().crtcActive, 1)

        // Off with a flip still pending: the backend waits for it.
        let pending = try XCTUnwrap(backend.acquireBuffer())
        fill(pending, 0x884422)
        try backend.present(pending, damage: nil)
        try backend.setPower(false)
        XCTAssertFalse(backend.isPoweredOn)
        XCTAssertFalse(backend.isFlipPending)
        XCTAssertEqual(flips, 2, "the flip pending at power-off completed first")
        XCTAssertEqual(try readBack().crtcActive, 0, "CRTC ACTIVE reads 0")
        try backend.setPower(false)
        assertDarkForAWhile(backend, loop: loop) { flips }
        do {
            let buffer = try XCTUnwrap(backend.acquireBuffer())
            defer { backend.releaseBuffer(buffer) }
            XCTAssertThrowsError(try backend.present(buffer, damage: nil)) { error in
                XCTAssertEqual("\(error)", "connector Virtual-1: present while the output is off")
            }
        }

        try backend.setPower(true)
        XCTAssertTrue(backend.isPoweredOn)
        XCTAssertEqual(try readBack().crtcActive, 1, "CRTC ACTIVE reads 1 again")
        let capture = try XCTUnwrap(presentFilled(backend, 0x11AA55, loop: loop, capture: capturer))
        XCTAssertEqual(flips, 3, "flips resume")
        let size = backend.info.mode.size
        let pixels = try capture.waitForPixels()
        let green: [UInt8] = [0x55, 0xAA, 0x11, 0]
        let expected: [UInt8] = (0..<size.width * size.height).flatMap { _ in green }
        let diff = compareImages(pixels, expected, size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "the frame after power-on is scanned out: \(diff)")
        _ = try presentFilled(backend, 0x202020, loop: loop)
        XCTAssertEqual(flips, 4)
    }

    func testLegacyPowerOffSetsDPMSOffAndPowerOnResumesFlips() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: .legacy))
        var flips = 0
        try backend.start(on: loop) { _ in flips += 1 }
        defer { backend.stop() }
        _ = try presentFilled(backend, 0x336699, loop: loop)
        XCTAssertEqual(try readBack().dpms, UInt64(DRM_MODE_DPMS_ON))

        try backend.setPower(false)
        XCTAssertFalse(backend.isPoweredOn)
        let off = try readBack()
        XCTAssertEqual(off.dpms, UInt64(DRM_MODE_DPMS_OFF), "connector DPMS reads Off")
        XCTAssertEqual(off.crtcActive, 0, "the atomic helpers turned DPMS Off into an inactive CRTC")
        assertDarkForAWhile(backend, loop: loop) { flips }

        try backend.setPower(true)
        let on = try readBack()
        XCTAssertEqual(on.dpms, UInt64(DRM_MODE_DPMS_ON))
        XCTAssertEqual(on.crtcActive, 1)
        _ = try presentFilled(backend, 0x11AA55, loop: loop)
        _ = try presentFilled(backend, 0x5511AA, loop: loop)
        XCTAssertEqual(flips, 3, "flips resume")
        // Legacy has no writeback: the CRTC scans out the buffer the last flip showed, which holds the new frame.
        let shown = try XCTUnwrap(backend.frontBufferSnapshot())
        XCTAssertEqual(Array(shown[0..<3]), [0xAA, 0x11, 0x55])
        XCTAssertNotNil(try readBack().crtcBuffer)
    }

    /// Through the engine: off, the tree keeps changing and nothing is flipped; on, the next frame (captured by
    /// writeback) shows the current state, and it is the engine's screenshot too.
    func testEnginePowerCycleShowsTheCurrentContent() throws {
        let loop = try MainLoop.epoll()
        let drm = try DRMBackend(options: DRMOptions(commit: .atomic))
        let capturer = try WritebackCapturer(backend: drm)
        let size = drm.info.mode.size
        let engine = try LayerEngine(loop: loop, backend: drm, compositor: try ShadowCompositor(size: size),
                                     pool: RenderQueuePool(strategy: .roundRobin, workerCount: 1))
        let box = Layer(frame: Rect(x: 10, y: 10, width: 100, height: 60), name: "box")
        box.backgroundColor = Color(rgb: 0xFF0000)
        engine.rootLayer.addChild(box)
        try engine.start()
        defer { engine.stop() }
        XCTAssertTrue(loop.spin { engine.stats.framesFlipped > 0 && !engine.hasPendingWork })

        try engine.setOutputPower(false)
        let flipped = engine.stats.framesFlipped, presented = engine.stats.framesPresented
        box.frame = Rect(x: 300, y: 200, width: 100, height: 60)
        box.backgroundColor = Color(rgb: 0x0000FF)
        _ = loop.spin(seconds: 0.25) { false }
        XCTAssertEqual(engine.stats.framesFlipped, flipped, "no flips while off")
        XCTAssertEqual(engine.stats.framesPresented, presented, "nothing presented while off")

        try capturer.captureNextPresent()
        try engine.setOutputPower(true)
        XCTAssertTrue(loop.spin { engine.stats.framesFlipped > flipped && !drm.isFlipPending })
        let captured = try XCTUnwrap(capturer.lastCapture).waitForPixels()
        func pixel(_ bytes: [UInt8], _ x: Int, _ y: Int) -> [UInt8] { Array(bytes[(y * size.width + x) * 4..<(y * size.width + x) * 4 + 3]) }
        XCTAssertEqual(pixel(captured, 350, 230), [0xFF, 0, 0], "the box in its new place and colour")
        XCTAssertEqual(pixel(captured, 50, 40), [0, 0, 0], "the old place cleared")
        let shot = try XCTUnwrap(engine.screenshot())
        let diff = compareImages(captured, shot, size: size, strideA: size.width * 4, strideB: size.width * 4, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "writeback vs screenshot: \(diff)")
    }
}
