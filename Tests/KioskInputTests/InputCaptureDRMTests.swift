import Foundation
import KioskCore
import KioskTestSupport
import XCTest

/// What the CRTC scans out while input happens, read back through vkms's writeback connector: a button's pressed
/// look while the finger is down, and the mouse's cursor, which hides a few seconds after the mouse stops.
final class InputCaptureDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    /// The halves scene's left button's fill.
    static let leftFill: UInt32 = 0x2050a0

    /// The HMI scene's start button, as the check names it: green, and darker green while pressed.
    func testThePressedLookIsScannedOutWhileTheFingerIsDown() throws {
        let rig = try InputRig(scene: InputTestEnvironment.hmiScene)
        defer { rig.stop() }
        let touch = try UInputDevice(.multitouch)
        rig.waitForDevice(touch.name)
        let start = try rig.frame(of: "start")
        // On the button's fill: across the middle, above the label.
        let (px, py) = (start.x + start.width / 2, start.y + 10)
        let normal: UInt32 = 0x2e7d32
        XCTAssertEqual(rig.pixel(try rig.capture(), x: px, y: py), normal, "the start button's normal look")

        try touch.down((Double(start.x) + Double(start.width) / 2) / Double(rig.size.width),
                       (Double(start.y) + Double(start.height) / 2) / Double(rig.size.height))
        rig.waitForReport("down start")
        let pressed = rig.pixel(try rig.capture(), x: px, y: py)
        XCTAssertNotEqual(pressed, normal, "the pressed look is on the CRTC while the finger is down")
        for shift in [16, 8, 0] {
            XCTAssertLessThan((pressed >> shift) & 0xff, (normal >> shift) & 0xff, "the pressed fill is darker in every channel")
        }

        try touch.up()
        rig.waitForReport("press start")
        XCTAssertEqual(rig.pixel(try rig.capture(), x: px, y: py), normal, "the normal look again after the release")
    }

    func testTheMouseCursorIsScannedOutAndHides() throws {
        let rig = try InputRig(scene: try InputTestEnvironment.halvesScene())
        defer { rig.stop() }
        let mouse = try UInputDevice(.mouse)
        rig.waitForDevice(mouse.name)
        // The pointer starts at the panel's centre; run it into the left edge: the arrow's tip is at (0, h/2).
        try mouse.move(-4000, 0)
        XCTAssertTrue(rig.loop.spin(seconds: 20) { rig.router.cursor?.isShown == true }, "the cursor never showed")
        let y = rig.size.height / 2 + 7
        let shown = try rig.capture()
        XCTAssertEqual(rig.pixel(shown, x: 3, y: y), 0xffffff, "the arrow, composited over the left button")
        XCTAssertEqual(rig.pixel(shown, x: 30, y: y), Self.leftFill, "beside it, the button")

        XCTAssertTrue(rig.loop.spin(seconds: 20) { rig.router.cursor?.isShown == false }, "the cursor never hid")
        XCTAssertEqual(rig.pixel(try rig.capture(), x: 3, y: y), Self.leftFill, "gone from the CRTC a few seconds after the last motion")
    }
}
