import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// `kioskd run` with two `outputs:` entries on one card: QEMU's virtio-gpu with two outputs, the flavour of
/// `TwoOutputVMTests` (its own step in scripts/test-all). kioskd drives Virtual-1 at 1024x768 and Virtual-2 at
/// 800x600, each with its own scene; each output's screenshot equals a headless render of its scene at its mode,
/// and each output's flips are paced by a timer at its own mode's refresh although virtio-gpu completes flips at
/// once. Fails, never skips, when the card is not such a card.
///
/// The tier also loads vkms, a second card: two kioskd in one sync group (one on virtio-gpu's Virtual-1, one on
/// vkms), a mosquitto on loopback inside the VM, the same looping clip on both, started at different times: captures
/// at the same group times show the same frame of the clip.
final class KioskdTwoOutputVMTests: XCTestCase {
    static let left = """
        size: display
        background: "#802010"
        pages:
          - name: main
            widgets:
              - {id: box, type: rect, background: "#ffcc00", x: 10%, y: 10%, width: 30%, height: 30%}
              - {id: bar, type: rect, background: "#ffffff", x: 5%, y: 70%, width: 20%, height: 10%}
        """
    static let right = """
        size: display
        background: "#103080"
        pages:
          - name: main
            widgets:
              - {id: box, type: rect, background: "#00ff80", x: 50%, y: 10%, width: 40%, height: 20%}
              - {id: bar, type: rect, background: "#ff00ff", x: 5%, y: 70%, width: 20%, height: 10%}
        """

    private var dir: URL!
    private var daemon: ControlledKioskd?

    override func setUpWithError() throws {
        try requireTwoConnectedOutputs()
        dir = try KioskdProcess.scratchDirectory("two-output-kioskd")
        try Self.left.write(to: dir.appendingPathComponent("left.yaml"), atomically: true, encoding: .utf8)
        try Self.right.write(to: dir.appendingPathComponent("right.yaml"), atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        if let daemon {
            let result = daemon.stop()
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        daemon = nil
    }

    /// What a single-output headless run of `scene` at `mode` shows.
    private func headlessRender(_ scene: String, mode: String) throws -> (pixels: [UInt8], size: Size, stride: Int) {
        let png = dir.appendingPathComponent("reference-\(scene)-\(mode).png")
        let run = try KioskdProcess.run(["run", "--backend", "headless", "--mode", mode, "--scene", dir.appendingPathComponent(scene).path,
                                         "--socket", "none", "--frames", "10", "--screenshot", png.path], timeout: 120)
        XCTAssertEqual(run.status, 0, run.stderr)
        return try readPNG(path: png.path)
    }

    private func screenshot(_ output: String, _ n: Int) throws -> (pixels: [UInt8], size: Size, stride: Int) {
        let path = dir.appendingPathComponent("shot-\(output)-\(n).png").path
        _ = try XCTUnwrap(daemon).result("screenshot", #"{"path": "\#(path)", "output": "\#(output)"}"#)
        return try readPNG(path: path)
    }

    /// Screenshots of `output` until one equals `expected` pixel for pixel (the scene renders after start).
    private func assertShows(_ expected: (pixels: [UInt8], size: Size, stride: Int), on output: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var last: (pixels: [UInt8], size: Size, stride: Int)?
        var n = 0
        try? Poll.until("\(output) to show its scene", timeout: 60, interval: 0.25) {
            n += 1
            let shot = try screenshot(output, n)
            last = shot
            guard shot.size == expected.size else { return false }
            return compareImages(shot.pixels, expected.pixels, size: shot.size, strideA: shot.stride, strideB: expected.stride,
                                 tolerance: 0).differingPixels == 0
        }
        let shot = try XCTUnwrap(last, "no screenshot of \(output)", file: file, line: line)
        XCTAssertEqual(shot.size, expected.size, output, file: file, line: line)
        if shot.size == expected.size {
            let diff = compareImages(shot.pixels, expected.pixels, size: shot.size, strideA: shot.stride, strideB: expected.stride, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "\(output): the screenshot differs from the headless render: \(diff)", file: file, line: line)
        }
    }

    private func byOutput() throws -> [String: [String: Any]] {
        try XCTUnwrap(try XCTUnwrap(daemon).result("stats")["by_output"] as? [String: [String: Any]], "stats has by_output")
    }

    func testTwoOutputsAtTwoModesShowTheirOwnScenesAndArePacedAtTheirOwnRefresh() throws {
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            scene: left.yaml
            outputs:
              - {connector: Virtual-1, mode: 1024x768, scene: left.yaml}
              - {connector: Virtual-2, mode: 800x600, scene: right.yaml}
            """.write(to: config, atomically: true, encoding: .utf8)
        daemon = try ControlledKioskd(["run", "--backend", "drm", "--config", config.path, "--seat", "none",
                                       "--screenshot-dir", KioskdProcess.scratchRoot], readyTimeout: 120)
        let kiosk = try XCTUnwrap(daemon)

        // Both outputs are driven, on the one virtio-gpu card, at their own modes.
        let outputs = try XCTUnwrap(try kiosk.result("display.info")["outputs"] as? [[String: Any]])
        XCTAssertEqual(outputs.map { $0["connector"] as? String }, ["Virtual-1", "Virtual-2"])
        XCTAssertEqual(outputs.map { $0["connected"] as? Bool }, [true, true], "\(outputs)")
        XCTAssertEqual(outputs.map { $0["driver"] as? String }, ["virtio_gpu", "virtio_gpu"], "\(outputs)")
        let modes = outputs.map { ($0["mode"] as? [String: Any])?["name"] as? String ?? "" }
        XCTAssertTrue(modes[0].hasPrefix("1024x768@"), "\(modes)")
        XCTAssertTrue(modes[1].hasPrefix("800x600@"), "\(modes)")

        // Each shows its own scene, equal to a headless render of that scene at that size.
        try assertShows(try headlessRender("left.yaml", mode: "1024x768"), on: "Virtual-1")
        try assertShows(try headlessRender("right.yaml", mode: "800x600"), on: "Virtual-2")

        // Animations on both keep both flipping; each is paced by its own timer at its own refresh.
        for output in ["Virtual-1", "Virtual-2"] {
            _ = try kiosk.result("animate", #"{"id": "bar", "property": "x", "to": 400, "duration": 30, "easing": "linear", "output": "\#(output)"}"#)
        }
        try Poll.until("both outputs to flip the animation", timeout: 60, interval: 0.1) {
            try byOutput().values.allSatisfy { ($0["frames_flipped"] as? Int ?? 0) > 30 }
        }
        let before = try byOutput(), start = MonotonicInstant.now()
        // At least three seconds of flips on each, measured against the test's own clock.
        let started = Date()
        try Poll.until("three seconds of flips", timeout: 30, interval: 0.2) { Date().timeIntervalSince(started) >= 3 }
        let after = try byOutput(), seconds = Double((MonotonicInstant.now() - start).nanosecondsClamped) / 1e9
        for (output, mode) in zip(["Virtual-1", "Virtual-2"], modes) {
            let refresh = try XCTUnwrap(Double(mode.split(separator: "@").last ?? ""), mode)
            let a = try XCTUnwrap(before[output]), b = try XCTUnwrap(after[output])
            XCTAssertEqual(b["flip_pacing"] as? String, "timer", "\(output): virtio-gpu has no vblank events")
            XCTAssertEqual(b["mode"] as? String, mode)
            let flips = (b["frames_flipped"] as? Int ?? 0) - (a["frames_flipped"] as? Int ?? 0)
            let rate = Double(flips) / seconds
            let interval = try XCTUnwrap(b["flip_interval_ms"] as? [String: Any])
            print("two outputs: \(output) \(mode): \(flips) flips in \(String(format: "%.2f", seconds)) s = \(String(format: "%.1f", rate))/s, flip interval p50 \(interval["p50"] ?? "-") ms")
            XCTAssertGreaterThan(flips, 0, "\(output) keeps flipping beside the other")
            XCTAssertLessThanOrEqual(rate, refresh * 1.05, "\(output): no faster than its refresh \(refresh) Hz")
            XCTAssertGreaterThanOrEqual(interval["p50"] as? Double ?? 0, 1000 / refresh - 0.5, "\(output): never two flips within one refresh period")
        }
    }

    func testTwoKiosksOnTwoCardsInOneSyncGroupShowTheSameVideoFrameAtTheSameGroupTime() throws {
        let cards = try DRMCard.cardPaths().map { try DRMCard(path: $0).driver }
        XCTAssertTrue(cards.contains("vkms"), "the tier loads vkms beside virtio_gpu (KIOSKD_VM_MODULES=\"virtio_gpu vkms\"), cards: \(cards)")
        let members = [GroupVideoCaptures.Member(id: "card-virtio", output: ["--backend", "drm", "--driver", "virtio_gpu", "--connector", "Virtual-1", "--mode", "800x600"]),
                       GroupVideoCaptures.Member(id: "card-vkms", output: ["--backend", "drm", "--driver", "vkms", "--mode", "800x600"])]
        // QEMU here emulates its CPUs (no KVM): the clip runs at 5 fps, which two debug kiosks keep up with.
        let clip = ProcessInfo.processInfo.environment["KIOSKD_VM_ACCEL"] == "kvm" ? GroupVideoCaptures.Clip.fast : .slow
        let (captures, states) = try GroupVideoCaptures.run(members, clip: clip, count: 4)
        GroupVideoCaptures.check(captures, states: states, members: members, clip: clip, label: "sync group video, virtio-gpu and vkms (\(clip.fps) fps)")
    }
}
