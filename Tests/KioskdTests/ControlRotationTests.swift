import Foundation
import KioskTestSupport
import XCTest

/// `display.info` reports the rotation the run composes with; the screenshot stays in the panel's orientation.
final class ControlRotationTests: XCTestCase {
    func testDisplayInfoReportsTheRunsRotation() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--rotation", "90"])
        defer { daemon.stop() }
        XCTAssertEqual(try daemon.result("display.info")["rotation"] as? Int, 90)
        let shot = try daemon.result("screenshot")
        XCTAssertEqual(shot["width"] as? Int, 320, "the scanout buffer's (physical) size")
        XCTAssertEqual(shot["height"] as? Int, 240)
    }
}
