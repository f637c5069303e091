import CDRM
import Foundation
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// The card as the outputs on it share it, on vkms (one connector, one CRTC): one open card per card, what an
/// output holds kept from the next (its connector, its cursor plane), a source's own output still its choice, and
/// the card closed, master released, when its last output goes. Two outputs side by side are `TwoOutputVMTests`.
final class SharedCardDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testOutputsShareOneOpenCardThatClosesWithTheLast() throws {
        let path = try XCTUnwrap(DRMCard.cardPaths().first)
        let source = DRMOutputSource(options: DRMOptions(device: path, commit: .atomic))
        let choice = try XCTUnwrap(try source.probe().choice, "vkms's connector is connected")
        var backend: (any DisplayBackend)? = try source.open(choice)
        weak var card: DRMCard?
        do {
            let drm = try XCTUnwrap(backend as? DRMBackend)
            card = drm.card
            XCTAssertTrue(try DRMCard.shared(path: path) === drm.card, "a second open of the card in this process is the same card")
            XCTAssertEqual(drm.card.session.backendCount, 1)

            // The source's own output stays its choice: a rescan must not take it for another output's.
            XCTAssertEqual(try source.probe().choice, choice)
            // Another source finds vkms's one connector driven; nothing to choose, and no CRTC shortage to report.
            let other = try DRMOutputSource(options: DRMOptions(device: path)).probe()
            XCTAssertNil(other.choice)
            XCTAssertEqual(other.connectors.first { $0.name == choice.connector }?.isConnected, true)
            XCTAssertNil(other.connectors.first { $0.name == choice.connector }?.unavailableReason)
            XCTAssertThrowsError(try DRMBackend(options: DRMOptions(device: path, connector: choice.connector))) { error in
                XCTAssertEqual("\(error)", "connector \(choice.connector) on \(path): is driven by another output (connector \(choice.connector))")
            }

            // A cursor plane one output holds is not another's (the backend holds its hooks until it goes).
            let loop = try MainLoop.epoll()
            try drm.start(on: loop) { _ in }
            let cursor = try DRMCursorPlane(backend: drm)
            XCTAssertEqual(drm.card.session.taken().planes[cursor.planeID], "connector \(choice.connector) (cursor)")
            XCTAssertThrowsError(try DRMCursorPlane(backend: drm), "vkms has one cursor plane, and it is held")
            drm.stop()
        }
        backend = nil
        XCTAssertNil(card, "the card closes with its last output")
        let next = try DRMCard(path: path)
        XCTAssertNoThrow(try next.becomeMaster(), "and master went with it")
        XCTAssertEqual(drmDropMaster(next.fd), 0)
    }

    /// An output that has stopped (its CRTC restored) but that something still holds on to, as a test rig or a
    /// detached slot may be: what it and its planes held is free for the next output, whose first modeset also
    /// treats its cursor plane as a stray to turn off.
    func testAStoppedOutputStillHeldKeepsNothingFromTheNext() throws {
        let path = try XCTUnwrap(DRMCard.cardPaths().first)
        let loop = try MainLoop.epoll()
        let first = try DRMBackend(options: DRMOptions(device: path, commit: .atomic))
        try first.start(on: loop) { _ in }
        let cursor = try DRMCursorPlane(backend: first)
        XCTAssertFalse(first.card.session.taken().isEmpty, "a running output holds its objects")
        first.stop()
        XCTAssertTrue(first.card.session.taken().isEmpty, "a stopped one holds nothing: \(first.card.session.taken())")
        let second = try DRMBackend(options: DRMOptions(device: path, connector: first.info.connector, commit: .atomic))
        try second.start(on: loop) { _ in }
        XCTAssertEqual(second.info.connector, first.info.connector)
        XCTAssertNil(try DRMResources(card: second.card).planes.first { $0.id == cursor.planeID }?.crtcID)
        let secondCursor = try DRMCursorPlane(backend: second)
        XCTAssertEqual(secondCursor.planeID, cursor.planeID, "the stopped output's cursor plane is the next one's")
        second.stop()
        withExtendedLifetime((first, cursor, secondCursor)) {}
    }

    /// A flip whose output goes before its event is read: the event, read later on the same card, reaches no one.
    func testAFlipEventForAnOutputThatHasGoneIsDropped() throws {
        let path = try XCTUnwrap(DRMCard.cardPaths().first)
        let loop = try MainLoop.epoll()
        var first: DRMBackend? = try DRMBackend(options: DRMOptions(device: path, commit: .atomic))
        let card = first!.card
        try first!.start(on: loop) { _ in }
        let buffer = try XCTUnwrap(first!.acquireBuffer())
        fill(buffer, 0xFF40_4040)
        try first!.present(buffer, damage: nil)
        // The mode set again forgets the flip in flight; its event still comes, after the output has gone.
        try first!.reacquire()
        first = nil
        XCTAssertEqual(card.session.backendCount, 0)

        let next = try DRMBackend(options: DRMOptions(device: path, commit: .atomic))
        XCTAssertTrue(next.card === card, "the card stayed open: the test holds it")
        var flips = 0
        try next.start(on: loop) { _ in flips += 1 }
        defer { next.stop() }
        XCTAssertTrue(loop.spin(seconds: 10) { card.session.lateFlipEvents == 1 }, "the late event was read and dropped")
        // The new output's own flips still arrive.
        let own = try XCTUnwrap(next.acquireBuffer())
        fill(own, 0xFF80_8080)
        try next.present(own, damage: nil)
        XCTAssertTrue(loop.spin(seconds: 10) { flips == 1 })
        XCTAssertEqual(card.session.lateFlipEvents, 1)
    }
}
