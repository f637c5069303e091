import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// Displays that come and go, on vkms: its connector forced off and on through sysfs. vkms is built with the
/// connector poll helper set up (scripts/vkms-setup), so the kernel's probe that the sysfs write runs sends the
/// `change` uevent with HOTPLUG=1 a real connector's interrupt would; kioskd reacts to that uevent, never to a
/// poll of its own. Every test puts the connector back to `detect` for the tests after it in the same boot.
final class HotplugDRMTests: XCTestCase {
    /// A scene that composes quickly in an emulated debug build: a background and one block, no text, no clock.
    static let scene = """
        size: display
        background: "#203040"
        pages:
          - name: main
            widgets:
              - {type: rect, background: "#e06000", x: 10%, y: 10%, width: 40%, height: 30%}
        """

    override func setUpWithError() throws { try requireDRMDevice() }

    override func tearDown() {
        try? Self.setConnector("detect")
    }

    func testStartedWithTheConnectorOffKioskdServesPingAndShowsTheSceneWhenItComesOn() throws {
        let dir = try KioskdProcess.scratchDirectory("hotplug-start-off")
        let scene = dir.appendingPathComponent("scene.yaml")
        try Data(Self.scene.utf8).write(to: scene)
        let capture = dir.appendingPathComponent("capture.png"), stats = dir.appendingPathComponent("stats.json")
        try Self.setConnector("off")

        // Ready means it answered `ping` with nothing connected; under systemd it is ready, waiting for a display.
        let notify = try NotifySocket()
        let daemon = try ControlledKioskd(["run", "--scene", scene.path, "--frames", "10", "--capture", capture.path,
                                           "--stats-out", stats.path], environment: ["NOTIFY_SOCKET": notify.path],
                                          readyTimeout: 120)
        let ready = try notify.waitFor("READY=1") { $0.contains("READY=1") }
        XCTAssertTrue(ready.contains("STATUS=waiting for a display (nothing connected)"), ready)
        let events = try ControlEventStream(daemon, events: ["display", "frame"])
        XCTAssertEqual(try daemon.error("display.info").code, "no_display")
        XCTAssertEqual(try daemon.error("screenshot").code, "no_display")
        let waiting = try events.stats()
        XCTAssertEqual(waiting["display_connected"] as? Bool, false)
        let outputs = try XCTUnwrap(waiting["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.first?["connector"] as? String, "Virtual-1")
        XCTAssertEqual(outputs.first?["connected"] as? Bool, false)

        let on = Date()
        try Self.setConnector("on")
        let connected = try events.waitFor("display connected", timeout: 20) { $0.name == "display" && $0.string("state") == "connected" }
        XCTAssertEqual(connected.string("connector"), "Virtual-1")
        try events.waitFor("the first frame", timeout: 20) { $0.name == "frame" }
        let firstFrame = Date().timeIntervalSince(on)
        print("connector on → display event and first frame presented: \(String(format: "%.0f", firstFrame * 1000)) ms")
        // The target is 1 s from the event, and it holds even here: the whole chain (sysfs write, the connector poll,
        // the uevent through udev, kioskd's probe, open and modeset, the composed frame, the event read back by the
        // test) took 0.2–0.6 s in this emulated VM on a loaded host. The scene was rendered while kioskd waited.
        XCTAssertLessThan(firstFrame, 1, "the scene is shown within 1 s of the hotplug event")

        let status = try notify.waitFor("a STATUS without waiting") { $0.contains("STATUS=scene") }
        XCTAssertFalse(status.contains("waiting for a display"), status)

        let r = daemon.waitForExit(timeout: 120)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr.components(separatedBy: "no display connected; waiting").count - 1, 1,
                       "one line says kioskd waits: \(r.stderr)")
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 10)
        XCTAssertEqual(s["mode"] as? String, "1024x768@60")

        // What the CRTC produced equals the headless render of the same scene, taken once that render is complete
        // (READY=1 goes out at the flip of the first frame with every layer rendered).
        let shot = dir.appendingPathComponent("headless.png")
        let referenceNotify = try NotifySocket()
        let reference = try ControlledKioskd(["run", "--backend", "headless", "--mode", "1024x768", "--scene", scene.path,
                                              "--screenshot-dir", dir.path], environment: ["NOTIFY_SOCKET": referenceNotify.path],
                                             readyTimeout: 120)
        _ = try referenceNotify.waitFor("READY=1 of the headless render") { $0.contains("READY=1") }
        _ = try reference.result("screenshot", #"{"path": "\#(shot.path)"}"#)
        XCTAssertEqual(reference.stop().status, 0)
        let a = try readPNG(path: capture.path), b = try readPNG(path: shot.path)
        XCTAssertEqual(a.size, b.size)
        let diff = compareImages(a.pixels, b.pixels, size: a.size, strideA: a.stride, strideB: b.stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
    }

    func testOffAndOnDuringARunKeepsKioskdUpAndShowsTheSceneAgain() throws {
        let dir = try KioskdProcess.scratchDirectory("hotplug-off-on")
        let scene = dir.appendingPathComponent("scene.yaml")
        try Data(Self.scene.utf8).write(to: scene)
        // The fps widget re-renders every second, so flips keep coming while a display is connected.
        let daemon = try ControlledKioskd(["run", "--scene", scene.path, "--fps-overlay"], readyTimeout: 120)
        let events = try ControlEventStream(daemon, events: ["display", "flip"])
        try events.waitFor(1, events: "flip", timeout: 60)
        let before = try events.stats()
        XCTAssertEqual(before["display_connected"] as? Bool, true)

        try Self.setConnector("off")
        let gone = try events.waitFor("display disconnected", timeout: 20) { $0.name == "display" && $0.string("state") == "disconnected" }
        XCTAssertEqual(gone.string("connector"), "Virtual-1")
        XCTAssertTrue(daemon.isRunning, "an unplugged connector is not a reason to exit")
        let off = try events.stats()
        XCTAssertEqual(off["display_connected"] as? Bool, false)
        XCTAssertEqual(try daemon.error("display.power", #"{"on": false}"#).code, "no_display")
        XCTAssertEqual(try daemon.error("display.info", #"{"output": "Virtual-1"}"#).code, "no_display")
        // Nothing flips while the connector is off, and kioskd sleeps. The window counted is 2 s with no request in it
        // but the two `stats` around it: the fps overlay's once-a-second tick and those requests wake the loop; a loop
        // still paced by a vblank that no longer comes, or polling for the display, would wake well over 100 times.
        let quiet = try events.stats()
        XCTAssertThrowsError(try events.waitFor(1, events: "flip", timeout: 2), "no flip while disconnected")
        let idle = try events.stats()
        let flippedOff = try XCTUnwrap(off["frames_flipped"] as? Int)
        XCTAssertEqual(idle["frames_flipped"] as? Int, flippedOff)
        let wakeups = (idle["loop_wakeups"] as? Int ?? 0) - (quiet["loop_wakeups"] as? Int ?? 0)
        print("loop wake-ups in 2 s while disconnected: \(wakeups)")
        XCTAssertLessThanOrEqual(wakeups, 12, "no busy wake-ups while waiting for a display")

        let replug = Date()
        try Self.setConnector("on")
        let back = try events.waitFor("display connected", timeout: 20) { $0.name == "display" && $0.string("state") == "connected" }
        XCTAssertEqual(back.string("connector"), "Virtual-1")
        try events.waitFor(1, events: "flip", timeout: 20)
        print("connector off and on again → first flip: \(String(format: "%.0f", Date().timeIntervalSince(replug) * 1000)) ms")
        try events.waitFor(1, events: "flip", timeout: 20)
        let after = try events.stats()
        XCTAssertEqual(after["display_connected"] as? Bool, true)
        XCTAssertEqual(after["connector"] as? String, "Virtual-1")
        XCTAssertGreaterThanOrEqual((after["frames_flipped"] as? Int ?? 0) - flippedOff, 2, "flips counted on from before the unplug")
        let shot = try events.request(#"{"id": 1, "cmd": "screenshot"}"#)
        XCTAssertEqual(shot["ok"] as? Bool, true, "\(shot)")
        let info = try daemon.result("display.info", #"{"output": "Virtual-1"}"#)
        XCTAssertEqual(info["connector"] as? String, "Virtual-1")
        let outputs = try XCTUnwrap(info["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.first { $0["connector"] as? String == "Virtual-1" }?["active"] as? Bool, true, "\(outputs)")

        let r = daemon.stop()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("connector Virtual-1: disconnected"), r.stderr)
        XCTAssertTrue(r.stderr.contains("connector Virtual-1: connected"), r.stderr)
    }

    /// Writes `on`, `off` or `detect` to the first card's Virtual-1 connector status in sysfs.
    static func setConnector(_ state: String) throws {
        let path = try statusPath()
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw OutputError("\(path): cannot open for writing: \(errnoDescription(errno))")
        }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(state.utf8))
    }

    private static func statusPath() throws -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/drm")) ?? []
        guard let name = names.sorted().first(where: { $0.hasSuffix("-Virtual-1") }) else {
            throw OutputError("/sys/class/drm has no *-Virtual-1 connector (vkms not loaded?): \(names)")
        }
        return "/sys/class/drm/\(name)/status"
    }
}
