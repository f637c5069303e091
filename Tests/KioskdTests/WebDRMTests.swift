import Foundation
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// The `web` widget on a real DRM device (vkms) with udevd and a uinput touchscreen, as on a board: the page is
/// scanned out as composed (writeback read back against the composed frame, 0 pixels apart), and a tap on an HTML
/// button runs its click handler, which the next capture shows.
final class WebDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    func testAPageIsScannedOutAsComposedAndATapOnItsButtonChangesIt() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-web")
        let page = dir.appendingPathComponent("page.html")
        // A blue button filling the page's right half turns green when clicked.
        try """
            <html><body style="margin:0;background:#e02000">
            <button style="position:absolute;left:160px;top:0;width:160px;height:240px;border:0;background:#0000ff"
              onclick="this.style.background='#00ff00'">go</button></body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            background: "#000000"
            widgets:
              - {id: page, type: web, url: "\(page.absoluteString)", x: 0, y: 0, width: 320, height: 240}
              - {id: label, type: text, text: "web", x: 340, y: 20, width: 200, height: 40, foreground: white}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        // 640x480: less for the emulated CPU to compare.
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--mode", "640x480", "--scene", scene.path],
                                          environment: ["STATE_DIRECTORY": state.path], readyTimeout: 120)
        defer { _ = daemon.stop() }
        let touch = try UInputDevice(.multitouch)
        try Poll.until("the page loaded and shown", timeout: 120, interval: 0.2) {
            let s = try daemon.result("web.state", #"{"id": "page"}"#)
            return s["state"] as? String == "loaded" && (s["frames_shown"] as? Int ?? 0) >= 1
        }
        // What is scanned out is what was composed.
        let verified = try daemon.result("output.verify")
        XCTAssertEqual(verified["result"] as? String, "matched", "\(verified)")
        XCTAssertEqual(verified["pixels_differing"] as? Int, 0, "\(verified)")
        let before = try shotPixel(daemon, dir, x: 240, y: 120)
        XCTAssertEqual(before, 0x0000FF, "the button before the tap")
        XCTAssertEqual(try shotPixel(daemon, dir, x: 80, y: 120), 0xE02000, "the page's background")

        // A tap on the button: the page's click handler runs, and the scan-out shows it.
        try Poll.until("the touchscreen opened", timeout: 30, interval: 0.05) {
            let devices = ((try daemon.result("stats")["input"] as? [String: Any])?["devices"] as? [String]) ?? []
            return devices.contains(touch.name)
        }
        try touch.tap(240.0 / 640, 120.0 / 480)
        try Poll.until("the button turned green", timeout: 60, interval: 0.2) { try shotPixel(daemon, dir, x: 240, y: 120) == 0x00FF00 }
        let after = try daemon.result("output.verify")
        XCTAssertEqual(after["result"] as? String, "matched", "\(after)")
        XCTAssertEqual(after["pixels_differing"] as? Int, 0, "\(after)")
        let stopped = daemon.stop()
        XCTAssertEqual(stopped.status, 0, stopped.stderr.suffix(2000).description)
    }

    private func shotPixel(_ daemon: ControlledKioskd, _ dir: URL, x: Int, y: Int) throws -> UInt32 {
        let file = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
        _ = try daemon.result("screenshot", #"{"path": "\#(file.path)"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        return try PNGFile(contentsOf: file).rgb(x: x, y: y)
    }
}
