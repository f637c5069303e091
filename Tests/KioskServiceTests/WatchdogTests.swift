import Foundation
import KioskCore
import KioskService
import KioskTestSupport
import XCTest

/// The watchdog's health rule and its pings, on a loop with a manual clock and a real notify socket.
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

    func testAFlipPendingForASecondWithoutProgressIsUnhealthy() {
        var flips = 0, pending = false
        let probe = FrameProgressProbe(loop: loop, flips: { flips }, flipPending: { pending })
        loop.runOnce(timeout: .zero)
        XCTAssertTrue(probe.check().healthy, "the loop turned, nothing pending")
        XCTAssertEqual(probe.check(), ServiceHealth(healthy: false, reason: "the main loop has not turned"))

        pending = true
        loop.runOnce(timeout: .zero)
        XCTAssertTrue(probe.check().healthy, "a flip just went out")
        poller.advance(to: loop.now + .milliseconds(900))
        loop.runOnce(timeout: .zero)
        XCTAssertTrue(probe.check().healthy, "pending for 0.9 s")
        poller.advance(to: loop.now + .milliseconds(200))
        loop.runOnce(timeout: .zero)
        let stalled = probe.check()
        XCTAssertFalse(stalled.healthy)
        XCTAssertTrue(stalled.reason.contains("page flip has been pending"), stalled.reason)

        flips = 1  // the flip completed and the next one is pending: progress
        loop.runOnce(timeout: .zero)
        XCTAssertTrue(probe.check().healthy)
        pending = false
        poller.advance(to: loop.now + .seconds(5))
        loop.runOnce(timeout: .zero)
        XCTAssertTrue(probe.check().healthy, "an idle kiosk flips nothing and is healthy")
    }

    func testPingsAtHalfThePeriodOnlyWhileHealthy() throws {
        let notify = try NotifySocket()
        setenv("NOTIFY_SOCKET", notify.path, 1)
        setenv("WATCHDOG_USEC", "200000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        var healthy = true
        let watchdog = try XCTUnwrap(ServiceWatchdog(loop: loop, notifier: ServiceNotifier(),
                                                     health: { ServiceHealth(healthy: healthy, reason: "test") }))
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
        XCTAssertNil(ServiceWatchdog(loop: loop, notifier: ServiceNotifier(), health: { ServiceHealth(healthy: true, reason: "") }))
        setenv("WATCHDOG_USEC", "200000", 1)
        setenv("WATCHDOG_PID", String(getpid() + 1), 1)
        XCTAssertNil(ServiceWatchdog(loop: loop, notifier: ServiceNotifier(), health: { ServiceHealth(healthy: true, reason: "") }))
    }
}
