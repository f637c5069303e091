import CDRM
import Foundation
import KioskDisplay
import KioskTestSupport
import XCTest

/// Input on a real KMS output with udevd and uinput devices, as on a board: taps on the HMI scene's buttons from a
/// 10-slot multitouch panel and a single-touch HID screen, through rotation and calibration; the keyboard's focus
/// ring; idle blanking read back from KMS and the waking touch swallowed; a device unplugged and plugged again.
final class InputDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    /// kioskd on the vkms output showing the HMI scene, with its input events and power changes subscribed.
    func launch(_ extra: [String] = [], scene: String = InputTestEnvironment.hmiScene) throws -> (ControlledKioskd, ControlEventStream) {
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--scene", scene] + extra, readyTimeout: 120)
        let events = try ControlEventStream(daemon, events: ["input", "power", "scene"])
        return (daemon, events)
    }

    func result(_ events: ControlEventStream, _ command: String, _ args: String = "{}") throws -> [String: Any] {
        let reply = try events.request(#"{"id": "t", "cmd": "\#(command)", "args": \#(args)}"#)
        return try XCTUnwrap(reply["result"] as? [String: Any], "\(command): \(reply)")
    }

    /// Waits until kioskd's libinput has the devices (`stats` lists them by name).
    func waitForDevices(_ events: ControlEventStream, _ names: [String], present: Bool = true) throws {
        try Poll.until("input devices \(names) \(present ? "added" : "removed")", timeout: 20, interval: 0.05) {
            let devices = ((try events.stats()["input"] as? [String: Any])?["devices"] as? [String]) ?? []
            return names.allSatisfy { devices.contains($0) == present }
        }
    }

    /// The centre of a widget of the HMI scene, in scene pixels: its frame plus its containers' (`layout` holds
    /// `controls`, which holds the buttons).
    func centre(_ events: ControlEventStream, _ id: String) throws -> (x: Double, y: Double) {
        var x = 0.0, y = 0.0, width = 0.0, height = 0.0
        for name in ["layout", "controls", id] {
            let frame = try XCTUnwrap(try result(events, "widget.get", #"{"id": "\#(name)"}"#)["frame"] as? [String: Any])
            x += frame["x"] as? Double ?? Double(frame["x"] as? Int ?? 0)
            y += frame["y"] as? Double ?? Double(frame["y"] as? Int ?? 0)
            width = frame["width"] as? Double ?? Double(frame["width"] as? Int ?? 0)
            height = frame["height"] as? Double ?? Double(frame["height"] as? Int ?? 0)
        }
        return (x + width / 2, y + height / 2)
    }

    /// The panel (mode) size.
    func panel(_ events: ControlEventStream) throws -> (width: Double, height: Double) {
        let mode = try XCTUnwrap(try result(events, "display.info")["mode"] as? [String: Any])
        return (Double(mode["width"] as? Int ?? 0), Double(mode["height"] as? Int ?? 0))
    }

    /// Waits for the `input` event of `kind` on `id`, returning it and every input event seen on the way.
    @discardableResult
    func waitForInput(_ events: ControlEventStream, _ kind: String, id: String?, seen: inout [String]) throws -> ControlEvent {
        var log: [String] = []
        defer { seen += log }
        return try events.waitFor("input \(kind) on \(id ?? "nothing")") { event in
            guard event.name == "input" else { return false }
            log.append("\(event.string("kind") ?? "?") \(event.string("id") ?? "-")")
            return event.string("kind") == kind && event.string("id") == id
        }
    }

    func testATapOnStartPressesItFromEitherTouchscreen() throws {
        let (daemon, events) = try launch()
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let multitouch = try UInputDevice(.multitouch), hid = try UInputDevice(.hid)
        try waitForDevices(events, [multitouch.name, hid.name])
        let start = try centre(events, "start"), stop = try centre(events, "stop")
        var seen: [String] = []

        try multitouch.down(start.x / panel.width, start.y / panel.height)
        try waitForInput(events, "down", id: "start", seen: &seen)
        XCTAssertEqual(try result(events, "widget.get", #"{"id": "start"}"#)["state"] as? String, "pressed",
                       "the pressed look while the finger is down")
        // A second finger elsewhere is ignored while the first drives.
        try multitouch.down(slot: 1, stop.x / panel.width, stop.y / panel.height)
        try multitouch.up(slot: 1)
        try multitouch.up()
        let press = try waitForInput(events, "press", id: "start", seen: &seen)
        XCTAssertEqual(press.string("output"), "Virtual-1")
        XCTAssertGreaterThan(press.int("time_us") ?? 0, 0)
        XCTAssertEqual(press.data["x"] as? Double ?? -1, start.x, accuracy: 2)
        XCTAssertEqual(press.data["y"] as? Double ?? -1, start.y, accuracy: 2)
        XCTAssertEqual(try result(events, "widget.get", #"{"id": "start"}"#)["state"] as? String, "normal")

        try hid.tap(stop.x / panel.width, stop.y / panel.height)
        try waitForInput(events, "press", id: "stop", seen: &seen)
        XCTAssertEqual(seen.filter { $0 != "up start" && $0 != "up stop" }, ["down start", "press start", "down stop", "press stop"],
                       "the second finger on stop pressed nothing")
    }

    func testWithRotation90ATapLandsOnTheWidgetDrawnThere() throws {
        let (daemon, events) = try launch(["--rotation", "90"])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let touch = try UInputDevice(.multitouch)
        try waitForDevices(events, [touch.name])
        // At 90 the scene's top runs along the panel's right edge: scene (x, y) is drawn at panel (W - y, x).
        let start = try centre(events, "start")
        var seen: [String] = []
        try touch.tap((panel.width - start.y) / panel.width, start.x / panel.height)
        try waitForInput(events, "press", id: "start", seen: &seen)
    }

    func testACalibrationThatSwapsTheAxes() throws {
        let (daemon, events) = try launch(["--calibration", "0,1,0,1,0,0"])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let touch = try UInputDevice(.multitouch)
        try waitForDevices(events, [touch.name])
        let start = try centre(events, "start")
        var seen: [String] = []
        // libinput applies the matrix: the device's x becomes the panel's y and the other way round.
        try touch.tap(start.y / panel.height, start.x / panel.width)
        try waitForInput(events, "press", id: "start", seen: &seen)
    }

    /// The config file's `input.map` calibrates one device by its name: the multitouch panel gets a matrix that
    /// swaps its axes, the HID screen keeps none.
    func testTheConfigFilesMapCalibratesOneDevice() throws {
        let config = try KioskdProcess.scratchDirectory("input-map").appendingPathComponent("kioskd.yaml")
        try """
            input:
              map:
                - {device: "*ft5406*", output: Virtual-1, calibration: [0, 1, 0, 1, 0, 0]}
            """.write(to: config, atomically: true, encoding: .utf8)
        let (daemon, events) = try launch(["--config", config.path])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let multitouch = try UInputDevice(.multitouch), hid = try UInputDevice(.hid)
        try waitForDevices(events, [multitouch.name, hid.name])
        let start = try centre(events, "start"), stop = try centre(events, "stop")
        var seen: [String] = []
        try multitouch.tap(start.y / panel.height, start.x / panel.width)
        try waitForInput(events, "press", id: "start", seen: &seen)
        try hid.tap(stop.x / panel.width, stop.y / panel.height)
        try waitForInput(events, "press", id: "stop", seen: &seen)
        XCTAssertEqual(seen.filter { $0.hasPrefix("press") }, ["press start", "press stop"])
    }

    /// ACTIVE of the CRTC, read on a second handle on the card.
    func crtcActive() throws -> UInt64? {
        let card = try DRMCard(path: DRMCard.cardPaths()[0])
        card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        card.setClientCap(Int32(DRM_CLIENT_CAP_ATOMIC), 1)
        let res = try DRMResources(card: card)
        let crtc = try XCTUnwrap(res.crtcs.first)
        return DRMPropertyTable(fd: card.fd, objectID: crtc.id, objectType: UInt32(DRM_MODE_OBJECT_CRTC))["ACTIVE"]?.value
    }

    func testIdleBlanksAndTheWakingTapPressesNothing() throws {
        let (daemon, events) = try launch(["--idle-blank-after", "2"])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let touch = try UInputDevice(.multitouch)
        try waitForDevices(events, [touch.name])
        let start = try centre(events, "start"), stop = try centre(events, "stop")
        try events.waitFor("power blanked", timeout: 30) { $0.name == "power" && $0.string("state") == "blanked" }
        XCTAssertEqual(try crtcActive(), 0, "blanking deactivates the CRTC")

        try touch.tap(start.x / panel.width, start.y / panel.height)
        let woken = try events.waitFor("power active") { $0.name == "power" && $0.string("state") == "active" }
        XCTAssertEqual(woken.string("reason"), "input")
        XCTAssertEqual(try crtcActive(), 1)
        // The next tap presses; nothing the waking tap did comes before it.
        var seen: [String] = []
        try touch.tap(stop.x / panel.width, stop.y / panel.height)
        try waitForInput(events, "press", id: "stop", seen: &seen)
        XCTAssertEqual(seen, ["down stop", "press stop"], "the waking tap reached no widget")
        XCTAssertEqual((try events.stats()["input"] as? [String: Any])?["swallowed"] as? Int, 1)
    }

    /// The backlight through a directory laid out as /sys/class/backlight: dimmed after idle time, and restored by
    /// the tap that wakes the screen, which presses nothing.
    func testTheBacklightDimsAndATapRestoresIt() throws {
        let classDir = try KioskdProcess.scratchDirectory("input-backlight")
        let device = classDir.appendingPathComponent("panel_backlight")
        try FileManager.default.createDirectory(at: device, withIntermediateDirectories: true)
        try Data("255\n".utf8).write(to: device.appendingPathComponent("max_brightness"))
        try Data("200\n".utf8).write(to: device.appendingPathComponent("brightness"))
        func brightness() throws -> String {
            String(decoding: try Data(contentsOf: device.appendingPathComponent("brightness")), as: UTF8.self)
        }
        let (daemon, events) = try launch(["--idle-dim-after", "2", "--idle-dim-level", "0.5", "--backlight-dir", classDir.path])
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let touch = try UInputDevice(.multitouch)
        try waitForDevices(events, [touch.name])
        let start = try centre(events, "start")
        // The dim may come before this test's subscription is up: wait on the state.
        try Poll.until("the idle dim", timeout: 30, interval: 0.05) {
            (try events.stats()["idle"] as? [String: Any])?["state"] as? String == "dimmed"
        }
        XCTAssertEqual(try brightness(), "100\n", "half the brightness found")

        try touch.tap(start.x / panel.width, start.y / panel.height)
        let woken = try events.waitFor("power active") { $0.name == "power" && $0.string("state") == "active" }
        XCTAssertEqual(woken.string("reason"), "input")
        XCTAssertEqual(try brightness(), "200\n", "the brightness is restored by the waking tap")
        var seen: [String] = []
        try touch.tap(start.x / panel.width, start.y / panel.height)
        try waitForInput(events, "press", id: "start", seen: &seen)
        XCTAssertEqual(seen, ["down start", "press start"], "the waking tap pressed nothing")
    }

    func testADeviceUnpluggedAndPluggedAgainKeepsWorking() throws {
        let (daemon, events) = try launch()
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        var touch = try UInputDevice(.multitouch)
        try waitForDevices(events, [touch.name])
        touch.remove()
        try waitForDevices(events, [touch.name], present: false)
        touch = try UInputDevice(.multitouch)
        try waitForDevices(events, [touch.name])
        let start = try centre(events, "start")
        var seen: [String] = []
        try touch.tap(start.x / panel.width, start.y / panel.height)
        try waitForInput(events, "press", id: "start", seen: &seen)
    }

    /// A mouse moves the pointer by relative motion (accelerated by libinput, so the test aims at halves of the
    /// screen, reached by running into its edges) and its left button presses what is under the pointer.
    func testAMouseClickPressesTheButtonUnderThePointer() throws {
        let (daemon, events) = try launch(scene: try InputTestEnvironment.halvesScene())
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let panel = try self.panel(events)
        let mouse = try UInputDevice(.mouse)
        try waitForDevices(events, [mouse.name])
        var seen: [String] = []
        try mouse.move(4000, 0)
        try mouse.click()
        let right = try waitForInput(events, "press", id: "right", seen: &seen)
        XCTAssertEqual(right.data["x"] as? Double ?? -1, panel.width - 1, accuracy: 1, "the pointer stops at the right edge")
        XCTAssertEqual(right.data["y"] as? Double ?? -1, panel.height / 2, accuracy: 1, "no vertical motion: still in the middle")
        try mouse.move(-8000, 0)
        try mouse.click()
        let left = try waitForInput(events, "press", id: "left", seen: &seen)
        XCTAssertEqual(left.data["x"] as? Double ?? -1, 0, accuracy: 1)
        XCTAssertEqual(seen.filter { $0.hasPrefix("press") }, ["press right", "press left"])
    }

    func testTheKeyboardMovesFocusAndPresses() throws {
        let (daemon, events) = try launch()
        defer { XCTAssertEqual(daemon.stop().status, 0) }
        let keyboard = try UInputDevice(.keyboard)
        try waitForDevices(events, [keyboard.name])
        var seen: [String] = []
        try keyboard.send("key 15")  // Tab: start
        try keyboard.send("key 28")  // Enter
        try waitForInput(events, "press", id: "start", seen: &seen)
        try keyboard.send("key 15")  // Tab: stop (reset is disabled)
        try keyboard.send("key 57")  // Space
        try waitForInput(events, "press", id: "stop", seen: &seen)
        try keyboard.send("key 15")  // Tab wraps to start
        try keyboard.send("press 42")
        try keyboard.send("key 15")  // Shift-Tab: back to stop
        try keyboard.send("release 42")
        try keyboard.send("key 28")
        try waitForInput(events, "press", id: "stop", seen: &seen)
        XCTAssertEqual(seen.filter { $0.hasPrefix("press") }, ["press start", "press stop", "press stop"])
    }
}
