import CDRM
import Foundation
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// Two outputs on one card: the VM flavour with QEMU's virtio-gpu with two outputs
/// (`KIOSKD_VM_DISPLAY=virtio-gpu-pci,max_outputs=2 KIOSKD_VM_MODULES=virtio_gpu`), run by its own step in
/// scripts/test-all. virtio-gpu gives each output its own connector (Virtual-1, Virtual-2), CRTC, primary and cursor
/// plane. Without a UI QEMU enables output 0 only, so Virtual-2 is forced on through sysfs first; it then offers the
/// modes of QEMU's EDID (1024x768 and 800x600 among them). virtio-gpu completes flips at once, so each output is
/// paced by a timer at its own mode's refresh. The tests fail, never skip, when the card is not such a card.
final class TwoOutputVMTests: XCTestCase {
    private var path = ""

    override func setUpWithError() throws {
        path = try requireTwoConnectedOutputs()
    }

    private func open(_ connector: String, _ mode: String) throws -> DRMBackend {
        try DRMBackend(options: DRMOptions(device: path, connector: connector, mode: ModeRequest(parsing: mode), commit: .atomic))
    }

    /// Presents a solid colour on `backend` whenever it has no flip pending, until it has `count` flips.
    private final class Presenter {
        let backend: DRMBackend
        let colour: UInt32
        var events: [FlipEvent] = []
        var failure: Error?
        var wanted = 0

        init(_ backend: DRMBackend, colour: UInt32) { self.backend = backend; self.colour = colour }

        func start(on loop: MainLoop) throws {
            try backend.start(on: loop) { [unowned self] event in events.append(event) }
        }

        /// Presents when due; returns whether it has its flips.
        func step() -> Bool {
            if !backend.isFlipPending, failure == nil, events.count < wanted, let buffer = backend.acquireBuffer() {
                fill(buffer, colour)
                do { try backend.present(buffer, damage: nil) } catch {
                    backend.releaseBuffer(buffer)
                    failure = error
                }
            }
            return events.count >= wanted || failure != nil
        }

        /// Every flip on a timer tick of its own, one refresh period of its own mode apart at least.
        func checkPacing(file: StaticString = #filePath, line: UInt = #line) {
            let frame = backend.info.mode.frameDuration.nanosecondsClamped
            XCTAssertTrue(backend.flipPacing.isTimer, "\(backend.info.connector): \(backend.flipPacing)", file: file, line: line)
            for (previous, next) in zip(events, events.dropFirst()) {
                XCTAssertGreaterThan(next.sequence, previous.sequence, "one flip per tick", file: file, line: line)
                let gap = (next.timestamp - previous.timestamp).nanosecondsClamped
                XCTAssertEqual(gap % frame, 0, "\(backend.info.connector): flips land on its own timer's ticks", file: file, line: line)
                XCTAssertGreaterThanOrEqual(gap, frame, "\(backend.info.connector): never two flips within one refresh period",
                                            file: file, line: line)
            }
        }

        /// The front buffer read back holds the colour everywhere.
        func checkFront(file: StaticString = #filePath, line: UInt = #line) {
            let size = backend.info.mode.size
            guard let pixels = backend.frontBufferSnapshot() else { return XCTFail("no front buffer", file: file, line: line) }
            XCTAssertEqual(pixels.count, size.width * size.height * 4, file: file, line: line)
            let wrong = pixels.withUnsafeBytes { raw in
                raw.bindMemory(to: UInt32.self).filter { $0 & 0x00FF_FFFF != colour & 0x00FF_FFFF }.count
            }
            XCTAssertEqual(wrong, 0, "\(backend.info.connector): every pixel of its front buffer is its own colour", file: file, line: line)
        }
    }

    private func run(_ presenters: [Presenter], flips: Int, on loop: MainLoop, seconds: Double = 60) {
        for p in presenters { p.wanted = p.events.count + flips }
        let done = loop.spin(seconds: seconds) { presenters.map { $0.step() }.allSatisfy { $0 } }
        XCTAssertTrue(done, "flips: " + presenters.map { "\($0.backend.info.connector) \($0.events.count)/\($0.wanted)" }.joined(separator: ", "))
        for p in presenters { XCTAssertNil(p.failure, "\(p.backend.info.connector)") }
    }

    func testTwoOutputsOnOneCardFlipAtTheirOwnModesWithTheirOwnContent() throws {
        let first = try open("Virtual-1", "1024x768")
        let second = try open("Virtual-2", "800x600")
        XCTAssertTrue(first.card === second.card, "one open card for both outputs: DRM master belongs to one open file")
        XCTAssertEqual(first.card.session.backendCount, 2)
        XCTAssertNotEqual(first.plan.crtc.id, second.plan.crtc.id)
        XCTAssertNotEqual(first.plan.primaryPlane.id, second.plan.primaryPlane.id)
        XCTAssertEqual(first.info.mode.size, Size(width: 1024, height: 768))
        XCTAssertEqual(second.info.mode.size, Size(width: 800, height: 600))

        let loop = try MainLoop.epoll()
        let a = Presenter(first, colour: 0xFF20_60C0), b = Presenter(second, colour: 0xFFC0_4020)
        try a.start(on: loop)
        try b.start(on: loop)
        defer { first.stop(); second.stop() }
        run([a, b], flips: 40, on: loop)
        a.checkPacing()
        b.checkPacing()
        a.checkFront()
        b.checkFront()
        print("two outputs: \(first.info.connector) \(first.info.mode) \(a.events.count) flips, \(second.info.connector) \(second.info.mode) \(b.events.count) flips")

        // The kernel's state: each CRTC in its own mode, each primary plane on its own CRTC.
        let res = try DRMResources(card: first.card)
        for backend in [first, second] {
            let crtc = try XCTUnwrap(res.crtc(id: backend.plan.crtc.id))
            XCTAssertEqual(crtc.mode?.mode.size, backend.info.mode.size, "CRTC \(crtc.id)")
            XCTAssertEqual(res.planes.first { $0.id == backend.plan.primaryPlane.id }?.crtcID, crtc.id)
        }
    }

    func testAThirdOutputFindsNoFreeConnectorAndAProbeSaysWhy() throws {
        let first = try open("Virtual-1", "1024x768")
        let second = try open("Virtual-2", "800x600")
        XCTAssertThrowsError(try DRMBackend(options: DRMOptions(device: path, connector: "Virtual-2"))) { error in
            XCTAssertEqual("\(error)", "connector Virtual-2 on \(path): is driven by another output (connector Virtual-2)")
        }
        XCTAssertThrowsError(try DRMBackend(options: DRMOptions(device: path))) { error in
            XCTAssertTrue("\(error)".contains("is driven by another output"), "\(error)")
        }
        // A source that drives neither sees both connected and chooses nothing.
        let probe = try DRMOutputSource(options: DRMOptions(device: path)).probe()
        XCTAssertNil(probe.choice)
        XCTAssertEqual(probe.connectors.filter(\.isConnected).count, 2)
        withExtendedLifetime((first, second)) {}
    }

    func testStoppingOneOutputLeavesTheOtherFlippingAndTheCardClosesWithTheLast() throws {
        let loop = try MainLoop.epoll()
        var first: DRMBackend? = try open("Virtual-1", "1024x768")
        var second: DRMBackend? = try open("Virtual-2", "800x600")
        weak let card = first!.card
        let secondCRTC = second!.plan.crtc.id, secondPlane = second!.plan.primaryPlane.id
        var a: Presenter? = Presenter(first!, colour: 0xFF30_A030)
        var b: Presenter? = Presenter(second!, colour: 0xFFA0_30A0)
        try a!.start(on: loop)
        try b!.start(on: loop)
        run([a!, b!], flips: 10, on: loop)

        second!.stop()
        b = nil
        second = nil
        XCTAssertEqual(card?.session.backendCount, 1, "the stopped output let go of the card; the other holds it")
        let res = try DRMResources(card: first!.card)
        XCTAssertNil(res.crtc(id: secondCRTC)?.mode, "the stopped output's CRTC is off")
        XCTAssertNil(res.planes.first { $0.id == secondPlane }?.crtcID)
        XCTAssertEqual(res.crtc(id: first!.plan.crtc.id)?.mode?.mode.size, Size(width: 1024, height: 768), "the other's CRTC is untouched")
        run([a!], flips: 20, on: loop)
        a!.checkPacing()
        a!.checkFront()

        // Another output opened now takes the free connector again, beside the running one.
        do {
            let again = try open("Virtual-2", "800x600")
            XCTAssertTrue(again.card === first!.card)
            XCTAssertEqual(again.plan.crtc.id, secondCRTC)
            let c = Presenter(again, colour: 0xFF10_1010)
            try c.start(on: loop)
            run([a!, c], flips: 10, on: loop)
            c.checkFront()
            again.stop()
        }

        first!.stop()
        a = nil
        first = nil
        XCTAssertNil(card, "the card closes with its last output")
        // Master went with it: a new open of the card becomes master.
        let next = try DRMCard(path: path)
        XCTAssertNoThrow(try next.becomeMaster())
    }

    func testBothOutputsHandTheCardOverAndTakeItBack() throws {
        let loop = try MainLoop.epoll()
        let first = try open("Virtual-1", "1024x768")
        let second = try open("Virtual-2", "800x600")
        let a = Presenter(first, colour: 0xFF00_80FF), b = Presenter(second, colour: 0xFFFF_8000)
        try a.start(on: loop)
        try b.start(on: loop)
        defer { first.stop(); second.stop() }
        run([a, b], flips: 5, on: loop)

        try first.dropMaster()
        XCTAssertEqual(drmIsMaster(first.card.fd), 0, "master belongs to the card: dropped for both outputs")
        XCTAssertNoThrow(try second.dropMaster(), "dropping it again for the card's other output is not an error")
        XCTAssertFalse(first.isFlipPending || second.isFlipPending)
        do {
            // Another process's open of the card can take master now.
            let other = try DRMCard(path: path)
            try other.becomeMaster()
            XCTAssertEqual(drmDropMaster(other.fd), 0)
        }
        try first.reacquire()
        try second.reacquire()
        run([a, b], flips: 10, on: loop)
        a.checkFront()
        b.checkFront()
    }
}
