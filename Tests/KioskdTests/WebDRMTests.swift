import Foundation
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// The `web` widget on a real DRM device (vkms) with udevd, a uinput touchscreen and a uinput keyboard, as on a
/// board: the page is scanned out as composed (writeback read back against the composed frame, 0 pixels apart), a
/// tap on an HTML button runs its click handler, which the next capture shows, and the keyboard's Tab takes the focus
/// ring into the page, whose `<input>` then gets the keys typed.
final class WebDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    func testAPageIsScannedOutAsComposedAndATapOnItsButtonChangesIt() throws {
        let dir = try KioskdProcess.scratchDirectory("drm-web")
        let page = dir.appendingPathComponent("page.html")
        // A blue button filling the page's right half turns green when clicked; "go" typed into the field turns the
        // page's background green.
        try """
            <html><body style="margin:0;background:#e02000">
            <input style="position:absolute;left:10px;top:10px;width:100px"
              oninput="document.body.style.background = this.value === 'go' ? '#00e020' : '#e02000'">
            <button style="position:absolute;left:160px;top:0;width:160px;height:240px;border:0;background:#0000ff"
              onclick="this.style.background='#00ff00'">go</button></body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            background: "#000000"
            widgets:
              - {id: page, type: web, url: "\(page.absoluteString)", x: 0, y: 0, width: 320, height: 240}
              - {id: label, type: text, text: "web", x: 340, y: 20, width: 200, height: 40, foreground: white}
              # Over the page's corner: the page stays in the composed frame (a page alone would go on a plane of its
              # own, which a writeback read-back cannot be compared with).
              - {id: corner, type: rect, background: "#000000", x: 316, y: 236, width: 8, height: 8}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let state = dir.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        // 640x480: less for the emulated CPU to compare.
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--mode", "640x480", "--scene", scene.path, "--screenshot-dir", dir.path],
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
        let before = try shotPixel(daemon, dir, x: 170, y: 20)
        XCTAssertEqual(before, 0x0000FF, "the button before the tap")
        XCTAssertEqual(try shotPixel(daemon, dir, x: 80, y: 120), 0xE02000, "the page's background")

        // A tap on the button: the page's click handler runs, and the scan-out shows it.
        try Poll.until("the touchscreen opened", timeout: 30, interval: 0.05) {
            let devices = ((try daemon.result("stats")["input"] as? [String: Any])?["devices"] as? [String]) ?? []
            return devices.contains(touch.name)
        }
        try touch.tap(240.0 / 640, 120.0 / 480)
        try Poll.until("the button turned green", timeout: 60, interval: 0.2) { try shotPixel(daemon, dir, x: 170, y: 20) == 0x00FF00 }
        let after = try daemon.result("output.verify")
        XCTAssertEqual(after["result"] as? String, "matched", "\(after)")
        XCTAssertEqual(after["pixels_differing"] as? Int, 0, "\(after)")

        // The keyboard: Tab enters the page (the scene's only stop), whose field takes "go".
        let keyboard = try UInputDevice(.keyboard)
        try Poll.until("the keyboard opened", timeout: 30, interval: 0.05) {
            let devices = ((try daemon.result("stats")["input"] as? [String: Any])?["devices"] as? [String]) ?? []
            return devices.contains(keyboard.name)
        }
        // The focus script and the keys reach the web process in order, over one connection: no wait between them.
        try keyboard.send("key 15")  // Tab
        try keyboard.send("key 34")  // g
        try keyboard.send("key 24")  // o
        try Poll.until("the typed word turned the page green", timeout: 60, interval: 0.2) {
            try shotPixel(daemon, dir, x: 80, y: 200) == 0x00E020
        }
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
