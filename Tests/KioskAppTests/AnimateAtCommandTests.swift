import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import XCTest

/// `animate`'s `at` through the control registry: a start in milliseconds since the epoch on the kiosk's clock (the
/// group's in a sync group), checked when the command is given.
final class AnimateAtCommandTests: XCTestCase {
    func testAnAnimationWaitsForItsStartAndBadStartsAreNamed() throws {
        let harness = try KioskHarness("animate-at")
        func x() throws -> Int? {
            if case .int(let x)? = try harness.call("widget.get", ["id": "t"]).result?["frame"]?["x"] { return Int(x) }
            return nil
        }
        try harness.waitUntil("the scene") { try x() != nil }
        for (bad, message) in [(JSONValue.string("soon"), "at"), (.double(-5), "milliseconds since 1970"), (.double(.infinity), "at")] {
            let reply = try harness.call("animate", ["id": "t", "property": "x", "to": .double(50), "at": bad])
            XCTAssertEqual(reply.error?["code"], "invalid_argument", "\(bad)")
            XCTAssertTrue("\(reply.error?["message"] ?? .null)".contains(message), "\(reply.error ?? .null)")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1e9)
        let tooFar = try harness.call("animate", ["id": "t", "property": "x", "to": .double(50), "at": .double(Double(now) / 1e6 + 7_200_000)])
        XCTAssertTrue("\(tooFar.error?["message"] ?? .null)".contains("at most"), "\(tooFar.error ?? JSONValue.null)")

        let start = Double(now) / 1e6 + 1000
        let reply = try harness.call("animate", ["id": "t", "property": "x", "to": .double(50), "duration": .double(0.2), "at": .double(start)])
        XCTAssertNil(reply.error)
        // The manual clock moved a frame at a time, the loop and the renders run after each.
        func frames(_ count: Int) {
            for _ in 0..<count {
                harness.advance(by: .microseconds(16_667))
                for _ in 0..<4 { harness.loop.runOnce(timeout: .zero); _ = harness.pool.runQueued() }
            }
        }
        frames(48)
        XCTAssertEqual(try x(), 0, "not started 0.8 s in")
        frames(18)
        let moving = try XCTUnwrap(x())
        XCTAssertTrue((1..<50).contains(moving), "under way 1.1 s in: \(moving)")
        frames(20)
        XCTAssertEqual(try x(), 50, "ended on its value")
    }
}
