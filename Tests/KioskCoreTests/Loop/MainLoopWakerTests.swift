import KioskCore
import XCTest

/// Wakers, signals and the order of one iteration, over the manual poller.
final class MainLoopWakerTests: XCTestCase {
    func testOneIterationRunsObserversSourcesSignalsTimersAndWakersInThatOrder() throws {
        let (loop, poller) = MainLoop.manual()
        var steps: [String] = []
        loop.addObserver(order: 0, activities: .beforeWaiting) { _ in steps.append("observer") }
        let waker = try loop.makeWaker { steps.append("waker") }
        loop.addTimer(after: .seconds(1)) { steps.append("timer") }
        try loop.onSignals([SIGTERM]) { _ in steps.append("signal") }
        try loop.addSource(fd: 50, events: .readable) { _ in steps.append("source") }

        waker.wake()
        poller.deliverSignal(SIGTERM)
        poller.signalReady(fd: 50, events: .readable)
        poller.advance(by: .seconds(1))
        loop.runOnce()

        XCTAssertEqual(steps, ["observer", "source", "signal", "timer", "waker"])
        XCTAssertEqual(loop.iterations, 1)
        XCTAssertEqual(loop.wakeups, 1)
    }

    func testWakesCoalesceIntoOneHandlerCall() throws {
        let (loop, poller) = MainLoop.manual()
        var calls = 0
        let waker = try loop.makeWaker { calls += 1 }

        for _ in 0..<5 { waker.wake() }
        loop.runOnce()
        loop.runOnce()

        XCTAssertEqual(calls, 1)
        XCTAssertEqual(poller.wakeupsSignalled, 1, "only the first of the five wakes reached the poller")
        XCTAssertEqual(loop.wakeups, 1)

        waker.wake()
        loop.runOnce()
        XCTAssertEqual(calls, 2)
        XCTAssertEqual(poller.wakeupsSignalled, 2)
    }

    func testOnlyTheWokenWakerRuns() throws {
        let (loop, _) = MainLoop.manual()
        var calls: [String] = []
        let first = try loop.makeWaker { calls.append("first") }
        _ = try loop.makeWaker { calls.append("second") }

        first.wake()
        loop.runOnce()

        XCTAssertEqual(calls, ["first"])
    }

    func testWakeFromItsOwnHandlerRunsItAgainInTheNextIteration() throws {
        let (loop, _) = MainLoop.manual()
        var calls = 0
        var waker: Waker?
        waker = try loop.makeWaker {
            calls += 1
            if calls < 3 { waker?.wake() }
        }

        waker?.wake()
        loop.runOnce()
        XCTAssertEqual(calls, 1)
        loop.runOnce()
        loop.runOnce()
        loop.runOnce()
        XCTAssertEqual(calls, 3)
    }

    func testDeliveredSignalsReachTheirHandlers() throws {
        let (loop, poller) = MainLoop.manual()
        var received: [Int32] = []
        try loop.onSignals([SIGTERM, SIGINT]) { received.append($0) }
        XCTAssertEqual(poller.watchedSignals, [SIGTERM, SIGINT])

        XCTAssertTrue(poller.deliverSignal(SIGINT))
        XCTAssertTrue(poller.deliverSignal(SIGTERM))
        XCTAssertTrue(poller.deliverSignal(SIGINT), "a standard signal raised twice before the wait arrives once")
        XCTAssertFalse(poller.deliverSignal(SIGHUP), "an unwatched signal is not delivered")
        loop.runOnce()

        XCTAssertEqual(received, [SIGINT, SIGTERM])
        XCTAssertEqual(loop.wakeups, 1)
    }

    func testLaterOnSignalsReplacesTheHandlerForThatSignal() throws {
        let (loop, poller) = MainLoop.manual()
        var received: [String] = []
        try loop.onSignals([SIGTERM, SIGHUP]) { received.append("old \($0)") }
        try loop.onSignals([SIGHUP]) { received.append("new \($0)") }

        poller.deliverSignal(SIGTERM)
        poller.deliverSignal(SIGHUP)
        loop.runOnce()

        XCTAssertEqual(received, ["old \(SIGTERM)", "new \(SIGHUP)"])
    }

    func testSignalsThatCannotBeCaughtAreRejected() {
        let (loop, _) = MainLoop.manual()
        XCTAssertThrowsError(try loop.onSignals([SIGTERM, SIGKILL]) { _ in }) { error in
            XCTAssertEqual((error as? LoopError)?.errno, EINVAL)
            XCTAssertTrue("\(error)".contains("signal \(SIGKILL)"), "\(error)")
        }
    }
}
