import Foundation
import KioskTestSupport
import XCTest

/// Eight clients at once (over forty connections with the idle ones) throw more than 10,000 malformed,
/// mutated, truncated, binary, wrongly typed and oversized lines at a headless kiosk in process, with well-formed
/// requests interleaved: it stays up, keeps flipping, answers every well-formed request exactly, and the memory of
/// the process (the kiosk and the storm's clients) returns to within 16 MiB of where it was.
final class ControlStormTests: XCTestCase {
    func testStormLeavesTheDaemonServingFlippingAndSmall() throws {
        let daemon = try InProcessKiosk()
        defer { daemon.stopExpectingSuccess() }
        let report = try runStorm(against: daemon, expected: .init(width: 320, height: 240), rssBoundKiB: 16 * 1024)
        XCTAssertGreaterThanOrEqual(report.malformedSent, 10_000)
    }
}

