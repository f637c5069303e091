import Foundation
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// A DRM driver without vblank: the VM flavour with QEMU's virtio-gpu (`KIOSKD_VM_DISPLAY=virtio-gpu-pci`,
/// module virtio_gpu) and no vkms, run by its own step in scripts/test-all. virtio-gpu completes every page flip
/// as soon as its commit is done, with the atomic helpers' event (sequence 0). With KIOSKD_REQUIRE_DRM=1 a missing
/// card fails; a card of another driver fails too, since these tests would prove nothing on it.
final class NoVblankVMTests: XCTestCase {
    override func setUpWithError() throws {
        try requireDRMDevice()
        let card = try DRMCard(path: try XCTUnwrap(DRMCard.cardPaths().first))
        guard card.driver == "virtio_gpu" else {
            if ProcessInfo.processInfo.environment["KIOSKD_REQUIRE_DRM"] == "1" {
                XCTFail("\(card.path) has driver \(card.driver), not virtio_gpu: run with KIOSKD_VM_DISPLAY=virtio-gpu-pci KIOSKD_VM_MODULES=virtio_gpu")
            }
            throw XCTSkip("\(card.path) has driver \(card.driver); these tests run in the virtio-gpu VM flavour")
        }
    }

    /// The backend finds at start that the driver has no vblank and paces by the timer: an engine that presents
    /// again from every flip callback gets one flip per refresh period, with consecutive sequence numbers.
    func testFlipsArePacedByATimerAtTheModesRefresh() throws {
        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(driver: "virtio_gpu"))
        var events: [FlipEvent] = []
        let frame = backend.info.mode.frameDuration
        try backend.start(on: loop) { event in events.append(event) }
        defer { backend.stop() }
        XCTAssertTrue(backend.flipPacing.isTimer, "virtio-gpu has no vblank: \(backend.flipPacing)")
        func presentNext() throws {
            let buffer = try XCTUnwrap(backend.acquireBuffer())
            fill(buffer, UInt32(0xFF00_0000 | (events.count * 40 & 0xFF)))
            try backend.present(buffer, damage: nil)
        }
        try presentNext()
        var failure: Error?
        XCTAssertTrue(loop.spin(seconds: 60) {
            if !backend.isFlipPending, failure == nil, events.count < 60 {
                do { try presentNext() } catch { failure = error }
            }
            return events.count >= 60 || failure != nil
        }, "60 flips")
        XCTAssertNil(failure)
        // Counters, not wall-clock bounds: every flip landed on a tick of its own, one refresh period apart.
        for (previous, next) in zip(events, events.dropFirst()) {
            XCTAssertGreaterThan(next.sequence, previous.sequence, "one flip per tick")
            let gap = (next.timestamp - previous.timestamp).nanosecondsClamped
            XCTAssertEqual(gap % frame.nanosecondsClamped, 0, "flips land on the timer's ticks")
            XCTAssertGreaterThanOrEqual(gap, frame.nanosecondsClamped, "never two flips within one refresh period")
        }
    }

    /// `kioskd run` on virtio-gpu: the run's flips are paced at the mode's refresh, and it says once why.
    func testKioskdPacesAVirtioGPUAtItsRefreshRate() throws {
        let dir = try KioskdProcess.scratchDirectory("virtio-gpu-run")
        let stats = dir.appendingPathComponent("stats.json")
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            background: "#203040"
            widgets:
              - {type: text, text: "no vblank", x: 5%, y: 5%, width: 50%, height: 10%, foreground: white}
              - {type: progress, value: 0.4, x: 5%, y: 80%, width: 90%, height: 5%}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let r = try KioskdProcess.run(["run", "--scene", scene.path, "--frames", "120", "--stats-out", stats.path], timeout: 180)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr.components(separatedBy: "flips paced by a timer").count - 1, 1, "one line says why: \(r.stderr)")
        XCTAssertTrue(r.stderr.contains("has no vblank"), r.stderr)
        let s = try KioskdProcess.readStats(stats)
        print("kioskd run (virtio-gpu): frames_flipped=\(s["frames_flipped"] ?? "-") average_fps=\(s["average_fps"] ?? "-") missed_vblanks=\(s["missed_vblanks"] ?? "-") flip_interval_ms=\(s["flip_interval_ms"] ?? "-") loop_wakeups=\(s["loop_wakeups"] ?? "-")")
        XCTAssertEqual(s["driver"] as? String, "virtio_gpu")
        XCTAssertEqual(s["flip_pacing"] as? String, "timer")
        XCTAssertEqual(s["frames_flipped"] as? Int, 120)
        let mode = try XCTUnwrap(s["mode"] as? String)
        let refresh = try XCTUnwrap(Double(mode.split(separator: "@").last ?? ""))
        let interval = try XCTUnwrap(s["flip_interval_ms"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(interval["p50"] as? Double ?? 0, 1000 / refresh - 0.5, "no faster than the refresh")
        XCTAssertLessThanOrEqual(s["average_fps"] as? Double ?? 1000, refresh + 0.5)
    }
}
