import CDRM
import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import XCTest

/// The DRM/KMS backend on a real device (vkms in CI): modeset, page flips on vblank events, buffer rules,
/// restore on stop, and errors that name the problem.
final class DRMBackendDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testDevicesReportListsConnectorModesAndPlanes() throws {
        let report = DeviceReport.describeAll()
        XCTAssertTrue(report.contains("Virtual-1"), report)
        XCTAssertNotNil(report.range(of: #"Virtual-1 \[id [0-9]+\]: connected"#, options: .regularExpression), "connected, not disconnected: \(report)")
        XCTAssertTrue(report.contains("1024x768@60"), report)
        XCTAssertTrue(report.contains(": primary,"), report)
        XCTAssertTrue(report.contains(": cursor,"), report)
        XCTAssertTrue(report.contains("XR24"), report)
    }

    private func flipFrames(commit: CommitChoice, buffers: Int, frames: Int) throws -> (events: [FlipEvent], api: CommitAPI) {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: commit, bufferCount: buffers))
        var events: [FlipEvent] = []
        try backend.start(on: loop) { events.append($0) }
        defer { backend.stop() }
        let colours: [UInt32] = [0xFF0000, 0x00FF00, 0x0000FF]
        for i in 0..<frames {
            guard let buffer = backend.acquireBuffer() else { XCTFail("no free buffer at frame \(i)"); break }
            fill(buffer, colours[i % colours.count])
            try backend.present(buffer, damage: nil)
            XCTAssertTrue(backend.isFlipPending)
            XCTAssertThrowsError(try backend.present(buffer, damage: nil), "a second flip while one is pending must be refused")
            XCTAssertTrue(loop.spin { !backend.isFlipPending }, "flip \(i) never completed")
        }
        // vkms has a real vblank (an hrtimer per CRTC): its flips are never held for a timer.
        XCTAssertEqual(backend.flipPacing, .vblank)
        return (events, backend.info.commitAPI)
    }

    private func assertVblankPaced(_ events: [FlipEvent], count: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(events.count, count, file: file, line: line)
        for (a, b) in zip(events, events.dropFirst()) {
            XCTAssertGreaterThan(b.sequence, a.sequence, "vblank sequence must advance", file: file, line: line)
            XCTAssertGreaterThan(b.timestamp, a.timestamp, "vblank timestamps must advance", file: file, line: line)
            XCTAssertNotEqual(b.bufferIndex, a.bufferIndex, "consecutive flips show different buffers", file: file, line: line)
        }
        if let first = events.first, let last = events.last, events.count > 1 {
            // vkms runs at 60 Hz: n flips span at least n-1 refresh periods (≈16.6 ms each).
            XCTAssertGreaterThanOrEqual((last.timestamp - first.timestamp).milliseconds, Double(events.count - 1) * 16.0,
                                        file: file, line: line)
        }
    }

    func testAtomicPageFlipsOnVblank() throws {
        let (events, api) = try flipFrames(commit: .atomic, buffers: 2, frames: 30)
        XCTAssertEqual(api, .atomic)
        assertVblankPaced(events, count: 30)
    }

    func testLegacyPageFlipsOnVblank() throws {
        let (events, api) = try flipFrames(commit: .legacy, buffers: 2, frames: 30)
        XCTAssertEqual(api, .legacy)
        assertVblankPaced(events, count: 30)
    }

    func testAutoChoosesAtomicOnVkms() throws {
        let backend = try DRMBackend(options: DRMOptions(commit: .auto))
        XCTAssertEqual(backend.info.commitAPI, .atomic)
        XCTAssertEqual(backend.info.connector, "Virtual-1")
        XCTAssertEqual(backend.info.driver, "vkms")
    }

    /// What the flip deadline reads: the CRTC's vblank counter moves on while the output runs, and a flip's event
    /// can be read without the loop (`readPendingEvents`), which returns at once when nothing waits.
    func testTheVblankCounterAdvancesAndPendingEventsAreReadWithoutTheLoop() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(bufferCount: 2))
        var flips: [FlipEvent] = []
        try backend.start(on: loop) { flips.append($0) }
        defer { backend.stop() }
        XCTAssertTrue(loop.spin { !backend.isFlipPending })
        backend.readPendingEvents()  // nothing waits: must not block
        let before = try XCTUnwrap(backend.vblankCounter, "CRTC_GET_SEQUENCE answered on vkms")
        let buffer = try XCTUnwrap(backend.acquireBuffer())
        try backend.present(buffer, damage: nil)
        let flipped = flips.count
        // The loop is never run: only readPendingEvents can take the flip's event.
        try Poll.until("the flip's event read by readPendingEvents", timeout: 5, interval: 0.001) {
            backend.readPendingEvents()
            return !backend.isFlipPending
        }
        XCTAssertEqual(flips.count, flipped + 1)
        let after = try XCTUnwrap(backend.vblankCounter)
        XCTAssertGreaterThan(after, before, "a vblank was counted between the present and its flip")
    }

    func testNeverHandsOutTheScannedOutOrPendingBuffer() throws {
        for count in [2, 3] {
            let loop = try MainLoop.epoll()
            let backend = try DRMBackend(options: DRMOptions(bufferCount: count))
            try backend.start(on: loop) { _ in }
            var front: Int?
            for _ in 0..<6 {
                var handed: [PixelBuffer] = []
                while let b = backend.acquireBuffer() { handed.append(b) }
                XCTAssertEqual(handed.count, count - 1, "\(count) buffers: all but the scanned-out one are free")
                if let front { XCTAssertFalse(handed.contains { $0.index == front }) }
                try backend.present(handed[0], damage: nil)
                for extra in handed.dropFirst() { backend.releaseBuffer(extra) }
                // While a flip is pending neither the front nor the pending buffer may be handed out.
                var during: [PixelBuffer] = []
                while let b = backend.acquireBuffer() { during.append(b) }
                XCTAssertEqual(during.count, count - 2)
                XCTAssertFalse(during.contains { $0.index == handed[0].index })
                if let front { XCTAssertFalse(during.contains { $0.index == front }) }
                during.forEach(backend.releaseBuffer)
                XCTAssertTrue(loop.spin { !backend.isFlipPending })
                front = handed[0].index
            }
            backend.stop()
        }
    }

    func testStopRestoresTheCRTCFoundAtStart() throws {
        let before = try currentCRTC()
        do {
            let loop = try MainLoop.epoll()
            let backend = try DRMBackend(options: DRMOptions())
            try backend.start(on: loop) { _ in }
            let b = try XCTUnwrap(backend.acquireBuffer())
            fill(b, 0x336699)
            try backend.present(b, damage: nil)
            XCTAssertTrue(loop.spin { !backend.isFlipPending })
            XCTAssertNotEqual(try currentCRTC().bufferID, before.bufferID, "our framebuffer is on screen while running")
            backend.stop()
        }
        let after = try currentCRTC()
        XCTAssertEqual(after.bufferID, before.bufferID)
        XCTAssertEqual(after.mode?.mode, before.mode?.mode)
    }

    private func currentCRTC() throws -> DRMResources.CRTC {
        let card = try DRMCard(path: DRMCard.cardPaths()[0])
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        return try XCTUnwrap(DRMResources(card: card).crtcs.first)
    }

    // MARK: errors name the problem and the valid choices

    private func openError(_ options: DRMOptions) -> String {
        do {
            _ = try DRMBackend(options: options)
            return "no error"
        } catch { return "\(error)" }
    }

    func testMissingDeviceNamesItAndListsCards() {
        let message = openError(DRMOptions(device: "/dev/dri/card9"))
        XCTAssertTrue(message.contains("/dev/dri/card9"), message)
        XCTAssertTrue(message.contains("ENOENT"), message)
        XCTAssertTrue(message.contains("available: /dev/dri/card0"), message)
    }

    func testUnknownConnectorListsConnectors() {
        let message = openError(DRMOptions(connector: "NOPE"))
        XCTAssertTrue(message.contains("connector NOPE not found"), message)
        XCTAssertTrue(message.contains("Virtual-1 (connected)"), message)
        XCTAssertFalse(message.contains("Writeback"), "writeback connectors are not display choices: \(message)")
    }

    func testUnofferedModeListsModes() {
        let message = openError(DRMOptions(mode: ModeRequest(width: 123, height: 45)))
        XCTAssertTrue(message.contains("mode 123x45 not offered by connector Virtual-1"), message)
        XCTAssertTrue(message.contains("1024x768@60"), message)
    }

    func testSecondMasterIsRefusedWithAClearError() throws {
        // Another open of the card holding master, as another process would.
        let other = try DRMCard(path: try XCTUnwrap(DRMCard.cardPaths().first))
        try other.becomeMaster()
        let message = openError(DRMOptions())
        XCTAssertTrue(message.contains("cannot become DRM master"), message)
        XCTAssertEqual(drmDropMaster(other.fd), 0)
    }

    func testASecondOutputOnTheSameConnectorInThisProcessIsRefusedWithAClearError() throws {
        let first = try DRMBackend(options: DRMOptions())
        let message = openError(DRMOptions())
        XCTAssertTrue(message.hasSuffix("is driven by another output (connector \(first.info.connector))"), message)
        withExtendedLifetime(first) {}
    }

    func testRequestedModeIsSet() throws {
        let backend = try DRMBackend(options: DRMOptions(mode: ModeRequest(width: 800, height: 600)))
        XCTAssertEqual(backend.info.mode.size, Size(width: 800, height: 600))
        let loop = try MainLoop.epoll()
        var flips = 0
        try backend.start(on: loop) { _ in flips += 1 }
        let b = try XCTUnwrap(backend.acquireBuffer())
        XCTAssertEqual(b.size, Size(width: 800, height: 600))
        try backend.present(b, damage: nil)
        XCTAssertTrue(loop.spin { flips == 1 })
        backend.stop()
    }

    /// FB_DAMAGE_CLIPS is attached only where the primary plane has the property (vkms in 6.1 has none); a present
    /// with damage rectangles works either way.
    func testDamageClipsFollowThePlaneAndPresentsWithDamageWork() throws {
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic))
        XCTAssertEqual(backend.supportsDamageClips, backend.plan.primaryPlane.properties["FB_DAMAGE_CLIPS"] != nil)
        let loop = try MainLoop.epoll()
        var flips = 0
        try backend.start(on: loop) { _ in flips += 1 }
        defer { backend.stop() }
        for i in 0..<3 {
            let b = try XCTUnwrap(backend.acquireBuffer())
            fill(b, 0x203040 + UInt32(i))
            try backend.present(b, damage: [Rect(x: 10, y: 10, width: 100, height: 50), Rect(x: 300, y: 200, width: 20, height: 20)])
            XCTAssertTrue(loop.spin { flips == i + 1 })
        }
    }
}
