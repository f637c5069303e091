import KioskRuntime
import XCTest

/// The press rules alone: first contact drives, release inside presses, sliding out cancels for good.
final class PressTrackerTests: XCTestCase {
    final class Box: CustomStringConvertible {
        let name: String
        init(_ name: String) { self.name = name }
        var description: String { name }
    }

    let a = Box("a"), b = Box("b")

    func describe(_ effects: [PressTracker<Box>.Effect]) -> [String] {
        effects.map { effect in
            switch effect {
            case .down(let t): "down \(t?.name ?? "-")"
            case .pressedLook(let t, let on): "look \(t.name) \(on ? "pressed" : "normal")"
            case .press(let t): "press \(t.name)"
            case .cancel(let t): "cancel \(t.name)"
            case .up(let t): "up \(t?.name ?? "-")"
            }
        }
    }

    func testReleaseInsidePresses() {
        var tracker = PressTracker<Box>()
        XCTAssertEqual(describe(tracker.down(.touch(slot: 0), on: a)), ["down a", "look a pressed"])
        XCTAssertEqual(describe(tracker.move(.touch(slot: 0), over: a)), [], "moving inside changes nothing")
        XCTAssertEqual(describe(tracker.up(.touch(slot: 0), over: a)), ["look a normal", "press a", "up a"])
        XCTAssertNil(tracker.drivingContact)
    }

    func testSlidingOutCancelsForGood() {
        var tracker = PressTracker<Box>()
        _ = tracker.down(.pointer, on: a)
        XCTAssertEqual(describe(tracker.move(.pointer, over: b)), ["look a normal", "cancel a"])
        XCTAssertEqual(describe(tracker.move(.pointer, over: a)), [], "coming back does not press again")
        XCTAssertEqual(describe(tracker.up(.pointer, over: a)), ["up a"], "no press after a cancel")
    }

    func testReleaseElsewhereCancels() {
        var tracker = PressTracker<Box>()
        _ = tracker.down(.touch(slot: 2), on: a)
        XCTAssertEqual(describe(tracker.up(.touch(slot: 2), over: nil)), ["look a normal", "cancel a", "up a"])
    }

    func testTheFirstContactDrivesAndOthersAreIgnored() {
        var tracker = PressTracker<Box>()
        _ = tracker.down(.touch(slot: 0), on: a)
        XCTAssertEqual(describe(tracker.down(.touch(slot: 1), on: b)), [], "a second finger is ignored")
        XCTAssertEqual(describe(tracker.move(.touch(slot: 1), over: nil)), [])
        XCTAssertEqual(describe(tracker.up(.touch(slot: 1), over: b)), [], "the second finger's release presses nothing")
        XCTAssertEqual(tracker.drivingContact, .touch(slot: 0))
        XCTAssertEqual(describe(tracker.up(.touch(slot: 0), over: a)), ["look a normal", "press a", "up a"])
        XCTAssertEqual(describe(tracker.down(.touch(slot: 1), on: b)), ["down b", "look b pressed"], "free again after the first went up")
    }

    func testAWithdrawnTouchCancels() {
        var tracker = PressTracker<Box>()
        _ = tracker.down(.touch(slot: 0), on: a)
        XCTAssertEqual(describe(tracker.cancel(.touch(slot: 0))), ["look a normal", "cancel a"])
        XCTAssertEqual(describe(tracker.up(.touch(slot: 0), over: a)), [], "the contact is gone")
    }

    func testADownOnNothingReportsOnlyDownAndUp() {
        var tracker = PressTracker<Box>()
        XCTAssertEqual(describe(tracker.down(.touch(slot: 0), on: nil)), ["down -"])
        XCTAssertEqual(describe(tracker.move(.touch(slot: 0), over: a)), [], "sliding onto a widget does not start a press")
        XCTAssertEqual(describe(tracker.up(.touch(slot: 0), over: a)), ["up -"])
    }
}
