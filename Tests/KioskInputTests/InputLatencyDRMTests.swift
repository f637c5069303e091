import Foundation
import KioskBench
import KioskCore
import KioskTestSupport
import XCTest

/// The latency benchmark of issue 13, run in the VM: 100 taps on the HMI scene's `start` button, each from the
/// kernel timestamp of the touch-down to the flip whose frame first shows the pressed look (`TapLatencyProbe`).
/// Prints the figures as one JSON line (`input-latency: {...}`), every figure measured or null.
///
/// Asserted: every tap reaches the screen with no render of the button (its pressed look is rendered ahead);
/// kioskd's own part (event to commit, on its clock) is within one refresh period; and p50 is within one refresh
/// period plus the button's render time.
///
/// Two things make the figure the one a user sees:
/// - Taps land at every phase of the refresh period, as fingers do (twenty phases after the last vblank, stepped
///   through every twenty taps), not at whatever moment the settling before each tap ends. `phase_tenths_hit`
///   shows the spread; all ten tenths must be hit.
/// - The code is optimized, as kioskd ships. A debug build spends about 9 ms of emulated CPU per tap on flattening
///   and diffing the tree (against about 3 ms optimized), which no board running kioskd pays. `scripts/test-all`
///   builds its one test bundle with `-O` (in `.build-opt`) and runs this class in the vkms boot; in a debug build
///   the case is skipped with that reason, and no tier of test-all runs it there.
final class InputLatencyDRMTests: XCTestCase {
    override func setUpWithError() throws { try InputTestEnvironment.prepare() }

    func testTapToPressedLookLatency() throws {
        if _isDebugAssertConfiguration() {
            throw XCTSkip("the touch-to-flip latency is measured on optimized code, as kioskd ships: run it from a "
                          + "build made with `swift build --build-tests -Xswiftc -O --scratch-path .build-opt` "
                          + "(as scripts/test-all does)")
        }
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
        let period = rig.drm.info.mode.frameDuration
        for tap in 1...taps {
            // A finger lands at any moment of the refresh period. Each tap is sent at its own phase after the last
            // vblank, stepping through twenty phases over every twenty taps, rather than at whatever moment the
            // settling before it ends (always the same few milliseconds after a flip).
            let phase = period * ((Double((tap * 7) % 20) + 0.5) / 20)
            var due = rig.loop.now + .milliseconds(1)
            if let vblank = probe.lastVblank {
                due = vblank + phase
                while due < rig.loop.now + .milliseconds(1) { due = due + period }
            }
            var sent = false
            let timer = rig.loop.addTimer(at: due) {
                // The loop turns while the helper writes the events: nothing but the kernel's queue stands between
                // the touch-down and kioskd's handling of it.
                touch.post("down 0 \(x) \(y)")
                sent = true
            }
            XCTAssertTrue(rig.loop.spin(seconds: 10) { sent }, "tap \(tap): the timer to send it never fired")
            withExtendedLifetime(timer) {}
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
        XCTAssertEqual(figures.phaseTenthsHit, 10, "the taps fell in every tenth of the refresh period")
        let accel = ProcessInfo.processInfo.environment["KIOSKD_VM_ACCEL"] ?? "unknown"
        XCTAssertEqual(figures.targetMet, true, "p50 \(figures.latencyMsP50 ?? -1) ms within one refresh period plus the "
                       + "button's render time, \(figures.targetMs ?? -1) ms (VM accelerator: \(accel))")
    }
}
