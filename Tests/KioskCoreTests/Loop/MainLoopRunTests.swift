import KioskCore
import XCTest

/// `run()`, `stop()` and the exit observers, over the manual poller.
final class MainLoopRunTests: XCTestCase {
    func testStopFromATimerEndsRunAndRunsExitObserversOnceInOrder() {
        let (loop, _) = MainLoop.manual()
        var calls: [String] = []
        loop.addObserver(order: ObserverOrder.commit, activities: .exit) { _ in calls.append("exit commit") }
        loop.addObserver(order: ObserverOrder.animations, activities: [.beforeWaiting, .exit]) { activity in
            calls.append(activity == .exit ? "exit animations" : "before animations")
        }
        loop.addObserver(order: ObserverOrder.layout, activities: .beforeWaiting) { _ in calls.append("before layout") }
        let cancelled = loop.addObserver(order: ObserverOrder.render, activities: .exit) { _ in calls.append("exit cancelled") }
        cancelled.cancel()
        loop.addTimer(after: .zero) {
            calls.append("timer")
            loop.stop()
        }

        loop.run()

        XCTAssertEqual(calls, ["before animations", "before layout", "timer", "exit animations", "exit commit"])
        XCTAssertEqual(loop.iterations, 1)
    }

    func testStopFromASignalHandlerEndsRun() throws {
        let (loop, poller) = MainLoop.manual()
        var received: Int32?
        var exits = 0
        loop.addObserver(order: 0, activities: .exit) { _ in exits += 1 }
        try loop.onSignals([SIGTERM, SIGINT, SIGHUP]) { signal in
            received = signal
            loop.stop()
        }

        poller.deliverSignal(SIGTERM)
        loop.run()

        XCTAssertEqual(received, SIGTERM)
        XCTAssertEqual(exits, 1)
        XCTAssertEqual(loop.iterations, 1)
    }

    func testStopFromAnObserverEndsRunWithoutSleeping() {
        let (loop, poller) = MainLoop.manual()
        loop.addObserver(order: 0, activities: .beforeWaiting) { _ in loop.stop() }

        loop.run()

        XCTAssertEqual(loop.iterations, 1)
        XCTAssertEqual(poller.lastWaitDeadline, loop.now, "after a stop the iteration only polls")
    }

    func testStopOutsideRunIsIgnoredAndRunCanBeCalledAgain() {
        let (loop, _) = MainLoop.manual()
        var exits = 0
        var stopAfter = 2
        loop.addObserver(order: 0, activities: .exit) { _ in exits += 1 }
        loop.addObserver(order: 1, activities: .beforeWaiting) { _ in
            stopAfter -= 1
            if stopAfter == 0 { loop.stop() }
        }

        loop.stop()
        loop.run()
        XCTAssertEqual(loop.iterations, 2, "the stop before run() did not end it early")

        stopAfter = 1
        loop.run()
        XCTAssertEqual(loop.iterations, 3)
        XCTAssertEqual(exits, 2)
    }

    func testLoopErrorNamesTheCallTheObjectAndTheErrno() {
        let error = LoopError(operation: "epoll_ctl(ADD)", object: "fd 7", errno: EBADF)
        XCTAssertEqual(error.description, "epoll_ctl(ADD) fd 7: EBADF (Bad file descriptor)")
        XCTAssertEqual(LoopError(operation: "eventfd", object: "", errno: EMFILE).description, "eventfd: EMFILE (Too many open files)")
    }
}
