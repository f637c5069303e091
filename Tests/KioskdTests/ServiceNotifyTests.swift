import Foundation
import KioskTestSupport
import XCTest

/// kioskd under a real notify socket, as systemd runs it (`Type=notify`, `WatchdogSec=`): the datagrams it sends
/// are read from a Unix datagram socket the test owns, with deadlines.
final class ServiceNotifyTests: XCTestCase {
    /// Starts kioskd through `sh`, so `WATCHDOG_PID` can be kioskd's own pid (`exec` keeps the shell's).
    private func startKioskd(_ arguments: [String], notify: NotifySocket, watchdogMicroseconds: Int,
                             socketPath: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", #"WATCHDOG_PID=$$ exec "$0" "$@""#, KioskdProcess.kioskdPath] + arguments + ["--socket", socketPath]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment["WATCHDOG_USEC"] = String(watchdogMicroseconds)
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    func testReadyStatusWatchdogReloadAndStopping() throws {
        let notify = try NotifySocket()
        let directory = try KioskdProcess.scratchDirectory("service-notify")
        let scene = directory.appendingPathComponent("scene.yaml")
        try "widgets:\n  - {id: t, type: text, text: Hello, x: 10, y: 10}\n".write(to: scene, atomically: true, encoding: .utf8)
        let socketPath = notify.path + ".control"
        let process = try startKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path],
                                      notify: notify, watchdogMicroseconds: 400_000, socketPath: socketPath)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) }; process.waitUntilExit(); unlink(socketPath) }

        let ready = try notify.waitFor("READY=1") { $0.contains("READY=1") }
        XCTAssertTrue(ready.contains("STATUS=scene \(scene.path) page main"), ready)
        XCTAssertTrue(ready.contains("fps") && ready.contains("missed vblanks"), ready)
        // READY=1 waits for the first frame with every layer rendered: by then the control socket answers and
        // the engine has presented a frame.
        let daemonStats = try ControlTestSocket(path: socketPath).request(#"{"id": 1, "cmd": "stats"}"#)
        let framesFlipped = (daemonStats?["result"] as? [String: Any])?["frames_flipped"] as? Int ?? 0
        XCTAssertGreaterThanOrEqual(framesFlipped, 1, "\(String(describing: daemonStats))")

        // Pings at half of WATCHDOG_USEC: three arrive well within the deadline.
        for n in 1...3 { _ = try notify.waitFor("WATCHDOG=1 #\(n)", timeout: 10) { $0 == "WATCHDOG=1" } }

        kill(process.processIdentifier, SIGHUP)
        let reloading = try notify.waitFor("RELOADING=1") { $0.contains("RELOADING=1") }
        XCTAssertTrue(reloading.contains("MONOTONIC_USEC="), reloading)
        let reloaded = try notify.waitFor("READY=1 after the reload") { $0.contains("READY=1") }
        XCTAssertTrue(reloaded.contains("STATUS=scene \(scene.path)"), reloaded)

        kill(process.processIdentifier, SIGTERM)
        let stopping = try notify.waitFor("STOPPING=1") { $0.contains("STOPPING=1") }
        XCTAssertTrue(stopping.contains("STATUS=stopping"), stopping)
        let deadline = Date().addingTimeInterval(30)
        let exited = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { process.waitUntilExit(); exited.signal() }
        XCTAssertEqual(exited.wait(timeout: .now() + deadline.timeIntervalSinceNow), .success, "kioskd exits after SIGTERM")
        XCTAssertEqual(process.terminationStatus, 0)
        let order = notify.messages.compactMap { m in ["READY=1", "RELOADING=1", "STOPPING=1"].first { m.contains($0) } }
        XCTAssertEqual(order, ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"], "\(notify.messages)")
    }

    /// `WATCHDOG_PID` naming another process means the watchdog is not kioskd's: no pings. The run ends on its
    /// own (`--frames`), so the check has a natural end instead of a timed wait.
    func testNoWatchdogPingsForAnotherProcess() throws {
        let notify = try NotifySocket()
        let socketPath = notify.path + ".control"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: KioskdProcess.kioskdPath)
        process.arguments = ["run", "--backend", "headless", "--mode", "320x240@60", "--scene", "default", "--frames", "120",
                             "--socket", socketPath]
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = notify.path
        environment["WATCHDOG_USEC"] = "100000"
        environment["WATCHDOG_PID"] = String(getpid())
        process.environment = environment
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) }; process.waitUntilExit(); unlink(socketPath) }
        _ = try notify.waitFor("READY=1") { $0.contains("READY=1") }
        let deadline = ProcessDeadline(process, seconds: 60)
        process.waitUntilExit()
        try deadline.finish("kioskd --frames 120")
        XCTAssertEqual(process.terminationStatus, 0)
        let all = notify.drain()
        XCTAssertFalse(all.contains { $0.contains("WATCHDOG") }, "\(all)")
        XCTAssertTrue(all.contains { $0.contains("STATUS=") }, "notify itself still works: \(all)")
    }
}
