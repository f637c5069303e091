import Foundation
import KioskTestSupport
import XCTest

/// Eight clients at once (over forty connections with the idle ones) throw more than 10,000 malformed,
/// mutated, truncated, binary, wrongly typed and oversized lines at a headless kioskd, with well-formed requests
/// interleaved: it stays up, keeps flipping, answers every well-formed request exactly, and its memory returns
/// to within 16 MiB of where it was.
final class ControlStormTests: XCTestCase {
    func testStormLeavesTheDaemonServingFlippingAndSmall() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60"])
        defer {
            let result = daemon.stop()
            XCTAssertEqual(result.status, 0, "kioskd: \(result.stderr.prefix(6000))")
        }
        let report = try runStorm(against: daemon, expected: .init(width: 320, height: 240), rssBoundKiB: 16 * 1024)
        XCTAssertGreaterThanOrEqual(report.malformedSent, 10_000)
    }
}

