import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskTestSupport
import XCTest

/// `output.info` reports the rotation the run composes with; the screenshot stays in the panel's orientation.
final class ControlRotationTests: XCTestCase {
    func testOutputInfoReportsTheRunsRotation() throws {
        let harness = try KioskHarness("control-rotation") { run, _ in run.configuration.settings.rotation = .degrees90 }
        XCTAssertEqual(try harness.call("output.info").result?["rotation"], 90)
        let shot = try XCTUnwrap(try harness.call("screenshot", advancing: .milliseconds(17)).result)
        XCTAssertEqual(shot["width"], 320, "the scanout buffer's (physical) size")
        XCTAssertEqual(shot["height"], 240)
    }
}
