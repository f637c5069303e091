import Foundation
import KioskCore
import KioskService
import KioskTestSupport
import XCTest

/// The watchdog's pings, driven by the engine's `FrameHealth` (its rule is tested with the engine), on a loop with a manual clock and a real notify socket.
final class WatchdogTests: XCTestCase {
    private var loop: MainLoop!
    private var poller: ManualPoller!

    override func setUp() {
        poller = ManualPoller()
        loop = MainLoop(poller: poller)
    }

    override func tearDown() {
        unsetenv("NOTIFY_SOCKET")
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
    }

    private func advance(_ duration: Duration) {
        runManualTime(loop, poller, for: duration, settlingAtEnd: true) { loop.runOnce(timeout: .zero) }
    }

    func testPingsAtHalfThePeriodOnlyWhileHealthy() throws {
        let notify = try NotifySocket()
        setenv("NOTIFY_SOCKET", notify.path, 1)
        setenv("WATCHDOG_USEC", "200000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        var healthy = true
        let watchdog = try XCTUnwrap(ServiceWatchdog(loop: loop, notifier: ServiceNotifier(),
                                                     health: { FrameHealth(isHealthy: healthy, reason: "test") }))
        XCTAssertEqual(watchdog.interval, .milliseconds(100))
        advance(.milliseconds(950))
        XCTAssertEqual(notify.drain().filter { $0 == "WATCHDOG=1" }.count, 10, "at 0, 100, ..., 900 ms")
        XCTAssertEqual(watchdog.pings, 10)

        healthy = false
        advance(.seconds(1))
        XCTAssertEqual(notify.drain().filter { $0 == "WATCHDOG=1" }.count, 10, "no ping while unhealthy")
        XCTAssertEqual(watchdog.skipped, 10)

        healthy = true
        advance(.milliseconds(500))
        XCTAssertEqual(notify.drain().filter { $0 == "WATCHDOG=1" }.count, 15, "pings resume")
    }

    func testNoWatchdogWithoutWatchdogUsecOrForAnotherProcess() {
        XCTAssertNil(ServiceWatchdog(loop: loop, notifier: ServiceNotifier(), health: { FrameHealth(isHealthy: true, reason: "ok") }))
        setenv("WATCHDOG_USEC", "200000", 1)
        setenv("WATCHDOG_PID", String(getpid() + 1), 1)
        XCTAssertNil(ServiceWatchdog(loop: loop, notifier: ServiceNotifier(), health: { FrameHealth(isHealthy: true, reason: "ok") }))
    }
}
