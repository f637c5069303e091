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

    /// A pool of one worker under `strategy`, held by a job that waits at the returned gate, so jobs submitted
    /// next stay queued until the caller opens it (on every way out: `defer { gate.open() }`).
    private static func poolWithItsOneWorkerHeld(_ strategy: RenderQueuePool.Strategy) throws -> (RenderQueuePool, Gate) {
        let pool = RenderQueuePool(strategy: strategy, workerCount: 1)
        let gate = Gate()
        pool.submit(RenderJobInfo(label: "blocker", kind: "test", priority: 0)) {
            gate.arrive()
            gate.waitUntilOpen()
        }
        do { try gate.waitForArrivals(1) } catch { gate.open(); throw error }
        return (pool, gate)
    }

    func testPriorityStrategyRunsTheMostImportantQueuedJobFirst() throws {
        let (pool, gate) = try Self.poolWithItsOneWorkerHeld(.priority)
        defer { gate.open() }
        let order = Lock<[String]>([])
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

    func testRoundRobinStrategyRunsJobsInSubmissionOrderIgnoringPriority() throws {
        let (pool, gate) = try Self.poolWithItsOneWorkerHeld(.roundRobin)
        defer { gate.open() }
        let order = Lock<[String]>([])
        for (label, priority) in [("first", 1), ("second", 5), ("third", 3)] {
            pool.submit(info(label, priority: priority)) { order.withLock { $0.append(label) } }
        }
        XCTAssertEqual(pool.queuedJobs.map(\.label), ["first", "second", "third"])
        gate.open()
        XCTAssertTrue(pool.waitUntilIdle())
        XCTAssertEqual(order.withLock { $0 }, ["first", "second", "third"])
    }

    /// Under either strategy, a job not known to be long goes before every long one, whatever its priority or
    /// submission order; among long ones the strategy's order holds.
    func testLongJobsWaitWhileAnyOtherJobWaits() throws {
        for strategy in [RenderQueuePool.Strategy.roundRobin, .priority] {
            let (pool, gate) = try Self.poolWithItsOneWorkerHeld(strategy)
            defer { gate.open() }
            let order = Lock<[String]>([])
            let jobs = [RenderJobInfo(label: "long-1", kind: "text", priority: 9, isLong: true),
                        RenderJobInfo(label: "short-1", kind: "text", priority: 0),
                        RenderJobInfo(label: "long-2", kind: "text", priority: 9, isLong: true),
                        RenderJobInfo(label: "short-2", kind: "text", priority: 1)]
            for job in jobs { pool.submit(job) { order.withLock { $0.append(job.label) } } }
            let expected = strategy == .priority ? ["short-2", "short-1", "long-1", "long-2"] : ["short-1", "short-2", "long-1", "long-2"]
            XCTAssertEqual(pool.queuedJobs.map(\.label), expected, "\(strategy)")
            gate.open()
            XCTAssertTrue(pool.waitUntilIdle())
            XCTAssertEqual(order.withLock { $0 }, expected, "\(strategy)")
        }
    }

    /// Jobs submitted together are ordered before an idle worker takes one: the long job submitted first does not
    /// start ahead of the short one submitted with it (the engine submits each pass's renders so).
    func testJobsSubmittedTogetherRunInTheQueuesOrderOnAnIdleWorker() throws {
        let pool = RenderQueuePool(strategy: .roundRobin, workerCount: 1)
        let order = Lock<[String]>([])
        let long: @Sendable () -> Void = { order.withLock { $0.append("long") } }
        let short: @Sendable () -> Void = { order.withLock { $0.append("short") } }
        pool.submit([(RenderJobInfo(label: "long", kind: "text", isLong: true), long), (info("short"), short)])
        XCTAssertTrue(pool.waitUntilIdle())
        XCTAssertEqual(order.withLock { $0 }, ["short", "long"])
    }

    /// With two workers, one busy with a long render: a long job and then a short one are queued while the other
    /// worker is busy too; the worker that frees takes the short one, and the long one only once nothing else waits.
    func testWithTwoWorkersALongRenderCannotTakeTheWorkerAShortOneWaitsFor() throws {
        let pool = RenderQueuePool(strategy: .roundRobin, workerCount: 2)
        let longGate = Gate(), shortGate = Gate()
        defer { longGate.open(); shortGate.open() }
        let done = Lock<[String]>([])
        pool.submit(RenderJobInfo(label: "long-running", kind: "text", isLong: true)) {
            longGate.arrive()
            longGate.waitUntilOpen()
            done.withLock { $0.append("long-running") }
        }
        pool.submit(info("short-running")) {
            shortGate.arrive()
            shortGate.waitUntilOpen()
            done.withLock { $0.append("short-running") }
        }
        try longGate.waitForArrivals(1)
        try shortGate.waitForArrivals(1)
        pool.submit(RenderJobInfo(label: "long-queued", kind: "text", isLong: true)) { done.withLock { $0.append("long-queued") } }
        pool.submit(info("short-queued")) { done.withLock { $0.append("short-queued") } }
        shortGate.open()
        try Poll.until("the queued jobs to run beside the long one", timeout: 10, interval: 0.001,
                       reading: { done.withLock { $0 } }, satisfies: { $0.count == 3 })
        XCTAssertEqual(done.withLock { $0 }, ["short-running", "short-queued", "long-queued"])
        longGate.open()
        XCTAssertTrue(pool.waitUntilIdle())
    }

    /// A job submitted while one worker runs a long render goes to the idle worker: a clock is not held back by
    /// a storm widget's render while a worker has nothing to do.
    func testRoundRobinGivesAJobToAnIdleWorkerRatherThanQueueItBehindARunningOne() throws {
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
            // Each one finishes while the long job still runs.
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
