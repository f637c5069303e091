import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// `kioskd run` with an `outputs:` section on vkms: one entry naming Virtual-1 drives it through its own output
/// slot (a DRM output source for that connector and mode), shows the entry's scene rather than the run's, answers
/// the control commands that name it, and follows the connector going off and on.
final class OutputsConfigDRMTests: XCTestCase {
    /// The entry's scene: quick to compose in an emulated debug build (no text, no clock).
    static let entryScene = """
        size: display
        background: "#305020"
        pages:
          - name: main
            widgets:
              - {type: rect, background: "#f0d000", x: 50%, y: 20%, width: 30%, height: 50%}
        """
    /// The run's own scene, which the entry's replaces on Virtual-1.
    static let runScene = """
        size: display
        background: "#800000"
        pages:
          - {name: main, widgets: []}
        """

    override func setUpWithError() throws { try requireDRMDevice() }

    override func tearDown() {
        try? HotplugDRMTests.setConnector("detect")
    }

    /// The config file with one `outputs:` entry, in a fresh scratch directory.
    private func writeConfig(_ name: String) throws -> (dir: URL, config: URL, scene: URL) {
        let dir = try KioskdProcess.scratchDirectory(name)
        let scene = dir.appendingPathComponent("entry.yaml"), config = dir.appendingPathComponent("kioskd.yaml")
        try Self.entryScene.write(to: scene, atomically: true, encoding: .utf8)
        try Self.runScene.write(to: dir.appendingPathComponent("run.yaml"), atomically: true, encoding: .utf8)
        try """
            scene: run.yaml
            outputs:
              - {connector: Virtual-1, mode: 1024x768@60, scene: entry.yaml}
            """.write(to: config, atomically: true, encoding: .utf8)
        return (dir, config, scene)
    }

    func testOneEntryShowsItsSceneInTheWritebackCapture() throws {
        let (dir, config, scene) = try writeConfig("outputs-config-capture")
        let capture = dir.appendingPathComponent("capture.png"), stats = dir.appendingPathComponent("stats.json")
        // The capture is of the last of --frames N: enough frames (2 s) that the scene has rendered by then in an
        // emulated VM on a loaded host; the frames before it may show the screen before the scene.
        let r = try KioskdProcess.run(["run", "--config", config.path, "--socket", "none", "--frames", "120",
                                       "--capture", capture.path, "--stats-out", stats.path], timeout: 180)
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 120)
        XCTAssertEqual(s["connector"] as? String, "Virtual-1")
        XCTAssertEqual(s["mode"] as? String, "1024x768@60")
        XCTAssertEqual(s["commit_api"] as? String, "atomic")

        // What the CRTC produced equals the headless render of the entry's scene, taken once that render is
        // complete (READY=1 goes out at the flip of the first frame with every layer rendered).
        let shot = dir.appendingPathComponent("headless.png")
        let notify = try NotifySocket()
        let reference = try ControlledKioskd(["run", "--backend", "headless", "--mode", "1024x768", "--scene", scene.path,
                                              "--screenshot-dir", dir.path], environment: ["NOTIFY_SOCKET": notify.path],
                                             readyTimeout: 120)
        _ = try notify.waitFor("READY=1 of the headless render") { $0.contains("READY=1") }
        _ = try reference.result("screenshot", #"{"path": "\#(shot.path)"}"#)
        XCTAssertEqual(reference.stop().status, 0)
        let a = try readPNG(path: capture.path), b = try readPNG(path: shot.path)
        XCTAssertEqual(a.size, b.size)
        XCTAssertEqual(Self.pixel(a, x: 700, y: 300), 0xF0D000, "the entry's scene, not the run's")
        let diff = compareImages(a.pixels, b.pixels, size: a.size, strideA: a.stride, strideB: b.stride, tolerance: 0)
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
    }

    func testTheEntryAnswersByNameAndFollowsItsConnectorOffAndOn() throws {
        let (_, config, _) = try writeConfig("outputs-config-hotplug")
        let daemon = try ControlledKioskd(["run", "--config", config.path], readyTimeout: 120)
        let info = try daemon.result("display.info", #"{"output": "Virtual-1"}"#)
        XCTAssertEqual(info["connector"] as? String, "Virtual-1")
        XCTAssertEqual(info["driver"] as? String, "vkms")
        XCTAssertEqual((try daemon.result("display.info")["outputs"] as? [[String: Any]])?.map { $0["connector"] as? String }, ["Virtual-1"])
        let unknown = try daemon.error("screenshot", #"{"output": "HDMI-A-1"}"#)
        XCTAssertEqual(unknown.code, "not_found")
        XCTAssertEqual(unknown.message, "screenshot: no output named 'HDMI-A-1'; outputs: Virtual-1")

        let events = try ControlEventStream(daemon, events: ["display", "flip"])
        try HotplugDRMTests.setConnector("off")
        let gone = try events.waitFor("display disconnected", timeout: 30) { $0.name == "display" && $0.string("state") == "disconnected" }
        XCTAssertEqual(gone.string("connector"), "Virtual-1")
        XCTAssertEqual(try daemon.error("display.power", #"{"on": true, "output": "Virtual-1"}"#).code, "no_display")
        try HotplugDRMTests.setConnector("on")
        let back = try events.waitFor("display connected", timeout: 30) { $0.name == "display" && $0.string("state") == "connected" }
        XCTAssertEqual(back.string("connector"), "Virtual-1")
        try events.waitFor("a flip after the replug", timeout: 30) { $0.name == "flip" }
        XCTAssertTrue(daemon.isRunning)
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// 0xRRGGBB at (x, y) of an XRGB8888 image.
    private static func pixel(_ image: (pixels: [UInt8], size: Size, stride: Int), x: Int, y: Int) -> UInt32 {
        let o = y * image.stride + x * 4
        return UInt32(image.pixels[o + 2]) << 16 | UInt32(image.pixels[o + 1]) << 8 | UInt32(image.pixels[o])
    }
}
