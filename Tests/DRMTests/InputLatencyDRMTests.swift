import Foundation
import KioskBench
import KioskCore
import XCTest

/// The latency benchmark of issue 13, run in the VM tier: 100 taps on the HMI scene's `start` button, each from
/// the kernel timestamp of the touch-down to the flip whose frame first shows the pressed look (`TapLatencyProbe`).
/// Prints the figures as one JSON line (`input-latency: {...}`), every figure measured or null. Every tap must
/// reach the screen with no render of the button (its pressed look is rendered ahead), kioskd's own part (event to
/// commit, on its clock) must be within one refresh period everywhere, and with KVM, p50 must be within one refresh
/// period plus the button's render time. Under TCG the guest's clock and vblank timer run on an emulated, shared
/// CPU (flips over 100 ms late are common there), so the touch-to-flip figures are printed and their target is left
/// to a KVM run, as the VM tier checks timing by counters.
final class InputLatencyDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    func testTapToPressedLookLatency() throws {
        let rig = try InputRig(scene: InputTestEnvironment.hmiScene)
        defer { rig.stop() }
        let root = rig.engine.rootLayer
        let body = try XCTUnwrap(TapLatencyProbe.buttonLayer("start", "body", in: root), "the HMI scene's start button")
        let pressed = try XCTUnwrap(TapLatencyProbe.buttonLayer("start", "pressed", in: root), "the start button's pressed look")
        let probe = TapLatencyProbe(engine: rig.engine, pressedLook: pressed, bodies: [body, pressed])
        rig.onEvent = { event in
            if case .touchDown = event.kind { probe.touchDown(kernelMicroseconds: event.timeMicroseconds) }
        }
        let touch = try UInputDevice(.multitouch)
        rig.waitForDevice(touch.name)
        let start = try rig.frame(of: "start")
        let (x, y) = touch.units((Double(start.x) + Double(start.width) / 2) / Double(rig.size.width),
                                 (Double(start.y) + Double(start.height) / 2) / Double(rig.size.height))
        let taps = 100
        for tap in 1...taps {
            // The loop turns while the helper writes the events: nothing but the kernel's queue stands between the
            // touch-down and kioskd's handling of it.
            touch.post("down 0 \(x) \(y)")
            XCTAssertTrue(rig.loop.spin(seconds: 10) { probe.shownCount == tap }, "tap \(tap): the pressed look never reached the screen")
            try touch.confirm()
            touch.post("up 0")
            XCTAssertTrue(rig.loop.spin(seconds: 10) { rig.reports.filter { $0 == "press start" }.count == tap }, "tap \(tap): no press")
            try touch.confirm()
            XCTAssertTrue(rig.settle(), "tap \(tap): the normal look never settled")
            guard probe.shownCount == tap else { break }
        }
        XCTAssertEqual(rig.reports.filter { $0 == "press start" }.count, taps, "every tap pressed start")
        let figures = probe.figures(refresh: rig.drm.info.mode.frameDuration)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print("input-latency: " + String(decoding: try encoder.encode(figures), as: UTF8.self))
        XCTAssertEqual(figures.taps, taps)
        XCTAssertEqual(figures.shown, taps)
        XCTAssertNotNil(figures.latencyMsP50)
        XCTAssertNotNil(figures.targetMet, "both the latency and the button's render time were measured")
        XCTAssertEqual(figures.rendersDuringPress, 0, "a press swaps to the pressed look rendered ahead: no render")
        // kioskd's own part (having the touch-down to committing the frame that shows the pressed look) holds no
        // render and no vblank wait while no flip is in flight at the touch-down (each tap settles first): it is
        // one loop turn's compose, copy and commit, so p50 beyond one refresh period means kioskd itself missed a
        // frame, on any CPU.
        let ownPart = try XCTUnwrap(figures.kioskdMsP50, "kioskd's own part was measured")
        XCTAssertLessThanOrEqual(ownPart, figures.refreshMs, "kioskd's own part, p50, within one refresh period")
        let accel = ProcessInfo.processInfo.environment["KIOSKD_VM_ACCEL"] ?? "unknown"
        if accel == "kvm" {
            XCTAssertEqual(figures.targetMet, true, "p50 \(figures.latencyMsP50 ?? -1) ms within one refresh period plus the button's render time, \(figures.targetMs ?? -1) ms")
        } else {
            print("input-latency: the VM runs under \(accel), not KVM: target_met is reported, not asserted, because the "
                  + "touch-to-flip figure includes the guest's emulated input queue and vblank timer (flips over 100 ms "
                  + "late are common there); kioskd's own part, kioskd_ms_p50, is asserted within one refresh period")
        }
    }
}
