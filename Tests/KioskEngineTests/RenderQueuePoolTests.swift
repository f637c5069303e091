#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import KioskTestSupport
import XCTest

final class RenderQueuePoolTests: XCTestCase {
    private func info(_ label: String, priority: Int = 0) -> RenderJobInfo {
        RenderJobInfo(label: label, kind: "test", priority: priority)
    }

    func testPriorityStrategyRunsTheMostImportantQueuedJobFirst() throws {
        let pool = RenderQueuePool(strategy: .priority, workerCount: 1)
        let gate = Gate()
        defer { gate.open() }
        let order = Lock<[String]>([])
        pool.submit(info("blocker")) {
            gate.arrive()
            gate.waitUntilOpen()
        }
        try gate.waitForArrivals(1)
        for (label, priority) in [("low", 1), ("high-1", 5), ("mid", 3), ("high-2", 5)] {
            pool.submit(info(label, priority: priority)) { order.withLock { $0.append(label) } }
        }
        XCTAssertEqual(pool.runningJobCount, 1)
        XCTAssertEqual(pool.queuedJobCount, 4)
        XCTAssertEqual(pool.queuedJobs.map(\.label), ["high-1", "high-2", "mid", "low"])
        gate.open()
        XCTAssertTrue(pool.waitUntilIdle())
        XCTAssertEqual(order.withLock { $0 }, ["high-1", "high-2", "mid", "low"])
        XCTAssertEqual(pool.outstandingJobCount, 0)
    }

    func testRoundRobinStrategySpreadsJobsOverItsSerialQueuesInTurn() throws {
        let pool = RenderQueuePool(strategy: .roundRobin, workerCount: 2)
        let threads = Lock<[Int: pthread_t]>([:])
        let gate = Gate()
        defer { gate.open() }
        for index in 0..<6 {
            pool.submit(info("job\(index)", priority: 10 - index)) {
                if index < 2 {
                    gate.arrive()
                    gate.waitUntilOpen()
                }
                threads.withLock { $0[index] = pthread_self() }
            }
        }
        try gate.waitForArrivals(2)  // both queues run at once
        XCTAssertEqual(pool.runningJobCount, 2)
        XCTAssertEqual(pool.queuedJobCount, 4)
        gate.open()
        XCTAssertTrue(pool.waitUntilIdle())
        let byJob = threads.withLock { $0 }
        XCTAssertEqual(byJob.count, 6)
        XCTAssertTrue(pthread_equal(byJob[0]!, byJob[2]!) != 0 && pthread_equal(byJob[2]!, byJob[4]!) != 0)
        XCTAssertTrue(pthread_equal(byJob[1]!, byJob[3]!) != 0 && pthread_equal(byJob[3]!, byJob[5]!) != 0)
        XCTAssertTrue(pthread_equal(byJob[0]!, byJob[1]!) == 0)
    }

    /// A short job whose turn falls on the queue busy with a long render goes to the idle queue instead: a clock
    /// is not held back by a storm widget's render while a worker has nothing to do.
    func testRoundRobinGivesAJobToAnIdleQueueRatherThanQueueItBehindARunningOne() throws {
        let pool = RenderQueuePool(strategy: .roundRobin, workerCount: 2)
        let gate = Gate()
        defer { gate.open() }
        let done = Lock<[String]>([])
        pool.submit(info("long")) {
            gate.arrive()
            gate.waitUntilOpen()
            done.withLock { $0.append("long") }
        }
        try gate.waitForArrivals(1)
        for label in ["short-1", "short-2", "short-3"] {
            pool.submit(info(label)) { done.withLock { $0.append(label) } }
            // Each one finishes while the long job still runs; strict rotation would queue short-2 behind it.
            try Poll.until("\(label) to run beside the long job", timeout: 10, interval: 0.001,
                           reading: { done.withLock { $0 } }, satisfies: { $0.contains(label) })
        }
        XCTAssertEqual(done.withLock { $0 }, ["short-1", "short-2", "short-3"], "none waited behind the long job")
        gate.open()
        XCTAssertTrue(pool.waitUntilIdle())
        XCTAssertEqual(done.withLock { $0 }.last, "long")
    }

    func testWorkersRunBelowTheCreatingThreadsPriority() {
        let base = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        for strategy in [RenderQueuePool.Strategy.roundRobin, .priority] {
            let pool = RenderQueuePool(strategy: strategy, workerCount: 1, niceIncrement: 5)
            let nice = Lock<Int32?>(nil)
            pool.submit(info("probe")) { nice.withLock { $0 = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) } }
            XCTAssertTrue(pool.waitUntilIdle())
            XCTAssertEqual(nice.withLock { $0 }, min(19, base + 5), "\(strategy)")
        }
        XCTAssertEqual(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0), base, "the calling thread keeps its own")
    }

    func testDefaultWorkerCountIsTheNumberOfOnlineProcessors() {
        XCTAssertEqual(RenderQueuePool().workerCount, RenderQueuePool.activeProcessorCount)
        XCTAssertEqual(RenderQueuePool(strategy: .manual).workerCount, 0)
    }

    func testManualPoolRunsOnlyWhatTheTestReleases() {
        let pool = RenderQueuePool(strategy: .manual)
        let ran = Lock<[String]>([])
        for (label, priority) in [("a", 0), ("b", 2), ("c", 0)] {
            pool.submit(info(label, priority: priority)) { ran.withLock { $0.append(label) } }
        }
        XCTAssertEqual(pool.queuedJobs.map(\.label), ["b", "a", "c"])
        XCTAssertEqual(pool.runQueued(where: { $0.label != "a" }), 2)
        XCTAssertEqual(ran.withLock { $0 }, ["b", "c"])
        XCTAssertEqual(pool.queuedJobs.map(\.label), ["a"])
        XCTAssertEqual(pool.runQueued(), 1)
        XCTAssertEqual(pool.outstandingJobCount, 0)
    }

    func testManyJobsFromManyThreadsAllRunOnce() {
        for strategy in [RenderQueuePool.Strategy.roundRobin, .priority] {
            let pool = RenderQueuePool(strategy: strategy, workerCount: 3)
            let count = Counter()
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<250 {
                    pool.submit(RenderJobInfo(label: "t\(thread)-\(index)", kind: "test", priority: index % 7)) { count.increment() }
                }
            }
            XCTAssertTrue(pool.waitUntilIdle())
            XCTAssertEqual(count.value, 1000, "\(strategy)")
        }
    }

    func testDroppingThePoolStopsItsWorkers() {
        let count = Counter()
        do {
            let pool = RenderQueuePool(strategy: .priority, workerCount: 2)
            for index in 0..<10 { pool.submit(info("j\(index)")) { count.increment() } }
            XCTAssertTrue(pool.waitUntilIdle())
        }
        XCTAssertEqual(count.value, 10)
    }
}
