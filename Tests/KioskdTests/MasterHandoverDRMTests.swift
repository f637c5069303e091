import CDRM
import Foundation
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// DRM master changing hands on a real device: a previous master's planes at the first modeset, kioskd handing
/// the display to another process and taking it back (SIGUSR1/SIGUSR2), and kioskd started while another process
/// holds master.
final class MasterHandoverDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    private func socketPath(_ name: String) throws -> String {
        var template = Array("/tmp/kioskd-mh-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ControlTestError("mkdtemp: errno \(errno)") }
        return String(cString: made) + "/\(name).sock"
    }

    func testFirstModesetTurnsOffACursorPlaneAPreviousMasterLeftOn() throws {
        // The previous master: a frame on the CRTC and the cursor plane on top of it, left on when it lets go.
        let path = try XCTUnwrap(DRMCard.cardPaths().first)
        let previous = try DRMCard(path: path)
        try previous.becomeMaster()
        previous.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        let res = try DRMResources(card: previous)
        let plan = try DRMOutputPlan.choose(in: res, device: path, connector: nil, mode: nil)
        let frame = try DumbBuffer(card: previous, size: plan.mode.mode.size)
        let cursorImage = try DumbBuffer(card: previous, size: Size(width: 64, height: 64))
        var connectorID = plan.connector.id
        var mode = plan.mode.raw
        XCTAssertEqual(drmModeSetCrtc(previous.fd, plan.crtc.id, frame.framebufferID, 0, 0, &connectorID, 1, &mode), 0)
        let cursor = try XCTUnwrap(res.planes.first { $0.type == .cursor && $0.possibleCRTCs & (1 << UInt32(plan.crtc.index)) != 0 },
                                   "vkms offers a cursor plane (enable_cursor=1)")
        XCTAssertEqual(drmModeSetPlane(previous.fd, cursor.id, plan.crtc.id, cursorImage.framebufferID, 0, 0, 0, 64, 64, 0, 0, 64 << 16, 64 << 16), 0,
                       "errno \(errno)")
        XCTAssertEqual(try DRMResources(card: previous).planes.first { $0.id == cursor.id }?.crtcID, plan.crtc.id)
        XCTAssertEqual(drmDropMaster(previous.fd), 0)

        let loop = try MainLoop.epoll()
        let backend = try DRMBackend(options: DRMOptions(commit: .atomic))
        try backend.start(on: loop) { _ in }
        defer { backend.stop() }
        let after = try DRMResources(card: backend.card)
        XCTAssertNil(after.planes.first { $0.id == cursor.id }?.crtcID, "the cursor plane is off after kioskd's first modeset")
        XCTAssertEqual(after.planes.first { $0.id == plan.primaryPlane.id }?.crtcID, plan.crtc.id)
        withExtendedLifetime((previous, frame, cursorImage)) {}
    }

    func testAnotherProcessTakesMasterAfterSIGUSR1AndKioskdResumesWithinASecondOfSIGUSR2() throws {
        let kiosk = try ControlledKioskd(["run", "--backend", "drm"])
        defer { _ = kiosk.stop() }
        try Poll.until("kioskd to show its scene", timeout: 20, reading: { try kiosk.framesFlipped() }, satisfies: { $0 > 0 })

        kiosk.process.signal(SIGUSR1)
        try Poll.until("health_reason 'waiting for DRM master'", timeout: 10,
                       reading: { try kiosk.result("stats")["health_reason"] as? String }, satisfies: { $0 == "waiting for DRM master" })
        XCTAssertEqual(try kiosk.result("stats")["healthy"] as? Bool, true, "handing the display over is not a fault")

        // A second process takes master, shows frames of its own and gives master back when it exits.
        let other = try KioskdProcess.run(["run", "--backend", "drm", "--frames", "30", "--socket", try socketPath("other")], timeout: 120)
        XCTAssertEqual(other.status, 0, "the second process got DRM master: \(other.stderr)")

        let flipped = try kiosk.framesFlipped()
        let handback = Date()
        kiosk.process.signal(SIGUSR2)
        try Poll.until("kioskd to flip again within 1 s of SIGUSR2 (frames_flipped above \(flipped))", timeout: 1,
                       reading: { try kiosk.framesFlipped() }, satisfies: { $0 > flipped })
        let resumedAfter = Date().timeIntervalSince(handback)
        print("kioskd resumed \(Int(resumedAfter * 1000)) ms after SIGUSR2")
        try Poll.until("health_reason 'ok'", timeout: 5,
                       reading: { try kiosk.result("stats")["health_reason"] as? String }, satisfies: { $0 == "ok" })
        let log = kiosk.process.stderrSoFar
        XCTAssertTrue(log.contains("DRM master dropped"), log)
        XCTAssertTrue(log.contains("display regained (DRM master where there is one); mode set again, redrawing the whole screen"), log)
        XCTAssertEqual(try kiosk.result("stats")["master_lost"] as? Int, 0, "a handover on request is not counted as a loss")
    }

    func testKioskdStartedWhileAnotherProcessHoldsMasterWaitsAndTakesTheDisplayOnceFree() throws {
        let holder = try ControlledKioskd(["run", "--backend", "drm"])
        try Poll.until("the holder to show its scene", timeout: 20, reading: { try holder.framesFlipped() }, satisfies: { $0 > 0 })

        let socket = try socketPath("waiting")
        let waiting = try KioskdProcess.start(["run", "--backend", "drm", "--socket", socket])
        defer { _ = waiting.finish(timeout: 0) }
        try Poll.until("kioskd to say it waits for DRM master; stderr: \(waiting.stderrSoFar)", timeout: 20) {
            waiting.stderrSoFar.contains("waiting for DRM master to be released")
        }
        XCTAssertTrue(waiting.process.isRunning)

        let released = Date()
        let holderResult = holder.stop()
        XCTAssertEqual(holderResult.status, 0, holderResult.stderr)
        try Poll.until("kioskd to take the display once master was free; stderr: \(waiting.stderrSoFar)", timeout: 10) {
            (try? ControlTestSocket(path: socket, timeoutSeconds: 2))?.request(#"{"id": 0, "cmd": "stats"}"#)
                .flatMap { $0["result"] as? [String: Any] }.flatMap { $0["frames_flipped"] as? Int }.map { $0 > 0 } ?? false
        }
        print("kioskd took the display \(Int(Date().timeIntervalSince(released) * 1000)) ms after the holder stopped")

        waiting.signal(SIGTERM)
        let result = waiting.finish(timeout: 20)
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("waiting for DRM master") }.count, 1, "one line while waiting, no spam: \(result.stderr)")
        XCTAssertEqual(lines.filter { $0.contains("DRM master is free; taking the display") }.count, 1, result.stderr)
    }
}
