import Glibc
import KioskCore
import KioskFleet
import XCTest

/// `LoopHoldMeter` tells a call that blocks from one that only takes CPU time: the injected fault is a call that
/// sleeps, against one that spins for as long.
final class LoopHoldMeterTests: XCTestCase {
    func testACallThatSleepsIsCountedAsBlocked() {
        var meter = LoopHoldMeter()
        let mark = LoopHoldMeter.mark()
        usleep(30_000)  // the blocking call measured, not a wait
        meter.record(since: mark)
        XCTAssertGreaterThanOrEqual(meter.longestHold, .milliseconds(30))
        XCTAssertGreaterThanOrEqual(meter.longestBlock, .milliseconds(25), "a 30 ms sleep is 30 ms blocked, less the call's own CPU time")
        XCTAssertLessThanOrEqual(meter.longestBlock, meter.longestHold)
    }

    func testACallThatOnlyComputesHoldsTheLoopWithoutBlocking() {
        var meter = LoopHoldMeter()
        let mark = LoopHoldMeter.mark()
        let start = MonotonicInstant.now()
        var spins = 0
        while MonotonicInstant.now() - start < .milliseconds(30) { spins += 1 }
        meter.record(since: mark)
        XCTAssertGreaterThan(spins, 0)
        XCTAssertGreaterThanOrEqual(meter.longestHold, .milliseconds(30))
        // Preempted or not, a thread that never gives up the CPU of its own accord blocked for nothing.
        XCTAssertLessThan(meter.longestBlock, .milliseconds(10), "spinning is CPU time, not blocking")
    }

    func testTheLongestOfSeveralCallsIsKept() {
        var meter = LoopHoldMeter()
        for sleep in [5_000, 40_000, 10_000] as [UInt32] {
            let mark = LoopHoldMeter.mark()
            usleep(sleep)  // the blocking call measured, not a wait
            meter.record(since: mark)
        }
        XCTAssertGreaterThanOrEqual(meter.longestHold, .milliseconds(40))
        XCTAssertGreaterThanOrEqual(meter.longestBlock, .milliseconds(35))
        XCTAssertLessThan(LoopHoldMeter().longestHold, .milliseconds(1), "a new meter has measured nothing")
    }
}
