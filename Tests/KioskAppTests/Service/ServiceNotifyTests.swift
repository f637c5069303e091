import Foundation
import KioskTestSupport
import XCTest

/// A kiosk under a real notify socket, as systemd runs kioskd (`Type=notify`, `WatchdogSec=`), in process: the
/// datagrams it sends are read from a Unix datagram socket the test owns, with deadlines. `WATCHDOG_PID` names this
/// process, the kiosk's.
final class ServiceNotifyTests: XCTestCase {
    func testReadyStatusWatchdogReloadAndStopping() throws {
        let notify = try NotifySocket()
        let directory = try KioskdProcess.scratchDirectory("service-notify")
        let scene = directory.appendingPathComponent("scene.yaml")
        try "widgets:\n  - {id: t, type: text, text: Hello, x: 10, y: 10}\n".write(to: scene, atomically: true, encoding: .utf8)
        let daemon = try InProcessKiosk(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000", "WATCHDOG_PID": String(getpid())]) {
            $0.scene = scene.path
        }
        defer { daemon.stop() }

        let ready = try notify.waitFor("READY=1") { $0.contains("READY=1") }
        XCTAssertTrue(ready.contains("STATUS=scene \(scene.path) page main"), ready)
        XCTAssertTrue(ready.contains("fps") && ready.contains("missed vblanks"), ready)
        // READY=1 waits for the first frame with every layer rendered: by then the control socket answers and
        // the engine has presented a frame.
        let daemonStats = try daemon.connect().request(#"{"id": 1, "cmd": "stats"}"#)
        let framesFlipped = (daemonStats?["result"] as? [String: Any])?["frames_flipped"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(framesFlipped, 1, "\(String(describing: daemonStats))")

        // Pings at half of WATCHDOG_USEC: three arrive well within the deadline.
        for n in 1...3 { _ = try notify.waitFor("WATCHDOG=1 #\(n)", timeout: 10) { $0 == "WATCHDOG=1" } }

        try daemon.signal(SIGHUP)
        let reloading = try notify.waitFor("RELOADING=1") { $0.contains("RELOADING=1") }
        XCTAssertTrue(reloading.contains("MONOTONIC_USEC="), reloading)
        let reloaded = try notify.waitFor("READY=1 after the reload") { $0.contains("READY=1") }
        XCTAssertTrue(reloaded.contains("STATUS=scene \(scene.path)"), reloaded)

        try daemon.signal(SIGTERM)
        let stopping = try notify.waitFor("STOPPING=1") { $0.contains("STOPPING=1") }
        XCTAssertTrue(stopping.contains("STATUS=stopping"), stopping)
        XCTAssertNil(try daemon.waitForExit(timeout: 30).map { "\($0)" }, "the run ends without an error after SIGTERM")
        let order = notify.messages.compactMap { m in ["READY=1", "RELOADING=1", "STOPPING=1"].first { m.contains($0) } }
        XCTAssertEqual(order, ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"], "\(notify.messages)")
    }

    /// `WATCHDOG_PID` naming another process (this one's parent) means the watchdog is not the kiosk's: no pings.
    /// The run ends on its own (`frames`), so the check has a natural end instead of a timed wait.
    func testNoWatchdogPingsForAnotherProcess() throws {
        let notify = try NotifySocket()
        XCTAssertNotEqual(getppid(), getpid())
        let daemon = try InProcessKiosk(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "100000", "WATCHDOG_PID": String(getppid())]) {
            $0.scene = "default"
            $0.frames = 120
        }
        defer { daemon.stop() }
        _ = try notify.waitFor("READY=1") { $0.contains("READY=1") }
        XCTAssertNil(try daemon.waitForExit(timeout: 60).map { "\($0)" })
        let all = notify.drain()
        XCTAssertFalse(all.contains { $0.contains("WATCHDOG") }, "\(all)")
        XCTAssertTrue(all.contains { $0.contains("STATUS=") }, "notify itself still works: \(all)")
    }
}
