import CDRM
import Foundation
import KioskCore
import KioskDisplay
import KioskRuntime
import KioskTestSupport
import XCTest

/// The mouse's cursor on vkms's cursor plane (enable_cursor=1): the plane's FB_ID and CRTC_ID set while it shows
/// and cleared when it hides, CRTC_X/CRTC_Y following the pointer, read back from KMS; the writeback capture
/// (vkms composes the cursor plane into it) shows the arrow where the plane puts it.
final class CursorPlaneDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    struct PlaneState: Equatable {
        var crtc: UInt32?
        var framebuffer: UInt32?
        var x: Int64
        var y: Int64
    }

    func planeState(_ rig: InputRig, _ plane: DRMCursorPlane) throws -> PlaneState {
        let read = try XCTUnwrap(try DRMResources(card: rig.drm.card).planes.first { $0.id == plane.planeID })
        func signed(_ name: String) -> Int64 { Int64(Int32(truncatingIfNeeded: read.properties[name]?.value ?? 0)) }
        return PlaneState(crtc: read.crtcID, framebuffer: read.bufferID, x: signed("CRTC_X"), y: signed("CRTC_Y"))
    }

    func testTheCursorIsOnThePlaneWhileItShowsFollowsTheMouseAndComesOffWhenItHides() throws {
        let rig = try InputRig(scene: try InputTestEnvironment.halvesScene(), cursorPlane: true)
        defer { rig.stop() }
        let plane = try XCTUnwrap(rig.router.cursorPlane as? DRMCursorPlane)
        XCTAssertNil(try planeState(rig, plane).crtc, "the plane is off before the mouse moves")
        let crtc = rig.drm.plan.crtc.id
        let mouse = try UInputDevice(.mouse)
        rig.waitForDevice(mouse.name)

        // Into the left edge: the arrow's tip is at (0, h/2).
        try mouse.move(-4000, 0)
        XCTAssertTrue(rig.loop.spin(seconds: 20) { (try? self.planeState(rig, plane).crtc) == crtc }, "the cursor plane never came on")
        XCTAssertEqual(rig.router.cursor?.path, .plane)
        let shown = try planeState(rig, plane)
        XCTAssertNotNil(shown.framebuffer, "FB_ID is set while the cursor shows")
        XCTAssertEqual(shown.x, 0)
        XCTAssertEqual(shown.y, Int64(rig.size.height / 2))
        let y = rig.size.height / 2 + 7
        var pixels = try rig.capture()
        XCTAssertEqual(rig.pixel(pixels, x: 3, y: y), 0xffffff, "the arrow, on the cursor plane over the left button")
        XCTAssertEqual(rig.pixel(pixels, x: 30, y: y), InputCaptureDRMTests.leftFill, "beside it, the button")
        let composed = try XCTUnwrap(rig.engine.screenshot(), "the shadow buffer holds the frame on screen")
        XCTAssertEqual(rig.pixel(composed, x: 3, y: y), InputCaptureDRMTests.leftFill, "the compositor drew no arrow: the plane shows it")

        try mouse.move(30, 0)
        XCTAssertTrue(rig.loop.spin(seconds: 20) { ((try? self.planeState(rig, plane).x) ?? 0) > 0 }, "CRTC_X never followed the mouse")
        XCTAssertTrue(rig.settle())
        let moved = try planeState(rig, plane)
        XCTAssertEqual(moved.y, shown.y, "a horizontal move keeps CRTC_Y")
        let x = Int(moved.x)
        pixels = try rig.capture()
        XCTAssertEqual(rig.pixel(pixels, x: x + 3, y: y), 0xffffff, "the arrow moved with CRTC_X to \(x)")
        XCTAssertEqual(rig.pixel(pixels, x: 3, y: y), InputCaptureDRMTests.leftFill, "and is gone from where it was")

        XCTAssertTrue(rig.loop.spin(seconds: 20) { (try? self.planeState(rig, plane).crtc) == .some(nil) }, "the plane never went off")
        XCTAssertEqual(rig.router.cursor?.isShown, false)
        XCTAssertNil(try planeState(rig, plane).framebuffer, "FB_ID is cleared when the cursor hides")
        XCTAssertEqual(rig.pixel(try rig.capture(), x: x + 3, y: y), InputCaptureDRMTests.leftFill, "gone from the CRTC")
    }

    func testKioskdRunSaysTheCursorGoesOnThePlaneAndLeavesItOffAtExit() throws {
        let kiosk = try ControlledKioskd(["run", "--backend", "drm", "--seat", "none"])
        try Poll.until("kioskd to show its scene", timeout: 20, reading: { try kiosk.framesFlipped() }, satisfies: { $0 > 0 })
        let input = try XCTUnwrap(try kiosk.result("display.info")["input"] as? [String: Any])
        let cursor = try XCTUnwrap(input["cursor"] as? [String: Any])
        XCTAssertEqual(cursor["path"] as? String, "plane", "\(cursor)")
        let name = try XCTUnwrap(cursor["plane"] as? String)
        XCTAssertTrue(name.hasPrefix("plane "), name)
        XCTAssertEqual(cursor["shown"] as? Bool, false, "no pointer has moved")
        XCTAssertEqual(kiosk.stop().status, 0)
        let card = try DRMCard(path: try XCTUnwrap(DRMCard.cardPaths().first))
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let id = try XCTUnwrap(UInt32(name.dropFirst("plane ".count)))
        XCTAssertNil(try DRMResources(card: card).planes.first { $0.id == id }?.crtcID, "the cursor plane is off after kioskd exits")
    }
}
