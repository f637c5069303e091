import KioskCore
import XCTest

final class MainLoopTimerTests: XCTestCase {
    func testOneShotTimersFireInDeadlineOrderWithNowAtTheirDeadline() {
        let (loop, _) = MainLoop.manual()
        var fired: [(name: String, at: MonotonicInstant)] = []
        loop.addTimer(after: .seconds(3)) { fired.append(("three", loop.now)) }
        loop.addTimer(at: manualTime(.seconds(1))) { fired.append(("one", loop.now)) }
        loop.addTimer(after: .milliseconds(2500)) { fired.append(("two and a half", loop.now)) }
        loop.addTimer(after: .seconds(2)) { fired.append(("two", loop.now)) }
        loop.addTimer(after: .seconds(2)) { fired.append(("two, second", loop.now)) }

        let iterations = loop.advanceTime(by: .seconds(5))

        XCTAssertEqual(fired.map(\.name), ["one", "two", "two, second", "two and a half", "three"])
        XCTAssertEqual(fired.map(\.at), [1000, 2000, 2000, 2500, 3000].map { manualTime(.milliseconds($0)) })
        XCTAssertEqual(iterations, 4, "timers due at the same instant fire in one iteration")
        XCTAssertEqual(loop.now, manualTime(.seconds(5)))
    }

    func testTimerDoesNotFireBeforeItsDeadline() {
        let (loop, poller) = MainLoop.manual()
        var fired = 0
        loop.addTimer(after: .seconds(1)) { fired += 1 }

        loop.advanceTime(by: .milliseconds(999))
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(fired, 0)

        poller.advance(by: .milliseconds(1))
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(fired, 1)

        loop.advanceTime(by: .seconds(10))
        XCTAssertEqual(fired, 1, "a one-shot timer fires once")
    }

    func testRepeatingTimerFiresEveryIntervalFromItsFirstDeadline() {
        let (loop, _) = MainLoop.manual()
        var firedAt: [MonotonicInstant] = []
        let timer = loop.addTimer(after: .milliseconds(500), repeating: .seconds(1)) { firedAt.append(loop.now) }

        loop.advanceTime(by: .seconds(4))

        XCTAssertEqual(firedAt, [500, 1500, 2500, 3500].map { manualTime(.milliseconds($0)) })
        XCTAssertEqual(timer.nextDeadline, manualTime(.milliseconds(4500)))
        timer.cancel()
    }

    func testRepeatingTimersInterleaveInDeadlineOrder() {
        let (loop, _) = MainLoop.manual()
        var fired: [String] = []
        let slow = loop.addTimer(after: .seconds(3), repeating: .seconds(3)) { fired.append("3s@\(loop.now)") }
        let fast = loop.addTimer(after: .seconds(2), repeating: .seconds(2)) { fired.append("2s@\(loop.now)") }

        loop.advanceTime(by: .seconds(6))

        XCTAssertEqual(fired, ["2s@2.0s", "3s@3.0s", "2s@4.0s", "3s@6.0s", "2s@6.0s"])
        slow.cancel()
        fast.cancel()
    }

    func testLoopWaitsUntilTheEarlierOfItsTimeoutAndTheNextTimer() {
        let (loop, poller) = MainLoop.manual()

        loop.runOnce()
        XCTAssertEqual(poller.waitCount, 1)
        XCTAssertNil(poller.lastWaitDeadline, "no timeout and no timer: wait with no deadline")

        loop.runOnce(timeout: .seconds(2))
        XCTAssertEqual(poller.lastWaitDeadline, manualTime(.seconds(2)))

        let timer = loop.addTimer(after: .seconds(5)) {}
        loop.runOnce(timeout: .seconds(10))
        XCTAssertEqual(poller.lastWaitDeadline, manualTime(.seconds(5)))
        loop.runOnce(timeout: .seconds(2))
        XCTAssertEqual(poller.lastWaitDeadline, manualTime(.seconds(2)))
        loop.runOnce()
        XCTAssertEqual(poller.lastWaitDeadline, manualTime(.seconds(5)))

        timer.cancel()
        loop.runOnce()
        XCTAssertNil(poller.lastWaitDeadline, "a cancelled timer no longer limits the wait")
        XCTAssertEqual(poller.waitCount, 6)
    }

    func testCancelledTimerDoesNotFire() {
        let (loop, _) = MainLoop.manual()
        var fired: [String] = []
        let cancelled = loop.addTimer(after: .seconds(1)) { fired.append("cancelled") }
        loop.addTimer(after: .seconds(2)) { fired.append("kept") }

        cancelled.cancel()
        loop.advanceTime(by: .seconds(3))

        XCTAssertEqual(fired, ["kept"])
        XCTAssertNil(cancelled.nextDeadline)
    }

    func testRepeatingTimerCanCancelItselfFromItsHandler() {
        let (loop, _) = MainLoop.manual()
        var fired = 0
        var timer: TimerHandle?
        timer = loop.addTimer(after: .seconds(1), repeating: .seconds(1)) {
            fired += 1
            if fired == 2 { timer?.cancel() }
        }

        loop.advanceTime(by: .seconds(10))

        XCTAssertEqual(fired, 2)
        XCTAssertNil(timer?.nextDeadline)
        XCTAssertNil(loop.nextTimerDeadline)
    }

    func testTimerCancelledByAnotherTimerDueInTheSameIterationDoesNotFire() {
        let (loop, _) = MainLoop.manual()
        var fired: [String] = []
        var victim: TimerHandle?
        loop.addTimer(after: .seconds(1)) {
            fired.append("canceller")
            victim?.cancel()
        }
        victim = loop.addTimer(after: .seconds(1)) { fired.append("victim") }

        let iterations = loop.advanceTime(by: .seconds(2))

        XCTAssertEqual(fired, ["canceller"])
        XCTAssertEqual(iterations, 1, "both were due in the same iteration")
    }

    func testMissedPeriodsAreSkippedInsteadOfFiredAsABurst() {
        let (loop, poller) = MainLoop.manual()
        var firedAt: [MonotonicInstant] = []
        let timer = loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { firedAt.append(loop.now) }

        // The loop was busy (or asleep) through the deadlines at 1 s, 2 s and 3 s.
        poller.advance(by: .milliseconds(3500))
        loop.runOnce(timeout: .zero)
        XCTAssertEqual(firedAt, [manualTime(.milliseconds(3500))], "one firing for the missed periods, not three")
        XCTAssertEqual(timer.nextDeadline, manualTime(.seconds(4)), "re-armed on the original grid")

        loop.advanceTime(to: manualTime(.seconds(5)))
        XCTAssertEqual(firedAt, [3500, 4000, 5000].map { manualTime(.milliseconds($0)) })
        timer.cancel()
    }

    func testTimerAddedByAHandlerFiresInDeadlineOrderWithinTheSameAdvance() {
        let (loop, _) = MainLoop.manual()
        var fired: [String] = []
        loop.addTimer(after: .seconds(1)) {
            fired.append("first@\(loop.now)")
            loop.addTimer(after: .milliseconds(500)) { fired.append("added@\(loop.now)") }
        }
        loop.addTimer(after: .seconds(2)) { fired.append("second@\(loop.now)") }

        loop.advanceTime(by: .seconds(3))

        XCTAssertEqual(fired, ["first@1.0s", "added@1.5s", "second@2.0s"])
    }

    func testTimerAddedDueNowByAHandlerFiresInTheNextIteration() {
        let (loop, _) = MainLoop.manual()
        var fired: [String] = []
        loop.addTimer(after: .seconds(1)) {
            fired.append("first")
            loop.addTimer(after: .zero) { fired.append("immediate") }
        }

        loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(fired, ["first", "immediate"])
        XCTAssertEqual(loop.iterations, 2, "a timer added while timers fire waits for the next iteration")
    }

    func testIdleLoopWakesOnlyForItsOwnTimer() {
        let (loop, _) = MainLoop.manual()
        var ticks = 0
        let clock = loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { ticks += 1 }

        loop.advanceTime(by: .seconds(10))

        XCTAssertEqual(ticks, 10)
        XCTAssertEqual(loop.wakeups, 10)
        XCTAssertEqual(loop.iterations, 10)

        // Polling with nothing to do is an iteration, not a wakeup.
        for _ in 0..<5 { loop.runOnce(timeout: .zero) }
        XCTAssertEqual(loop.wakeups, 10)
        XCTAssertEqual(loop.iterations, 15)
        clock.cancel()
    }
}
