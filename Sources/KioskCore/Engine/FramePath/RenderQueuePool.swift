#if canImport(Glibc)
import Glibc
#endif
import Logging

private let logger = Logger(label: "kioskd.render-pool")

/// A bounded pool of render workers running below the main thread's priority. Jobs are `@Sendable` closures; the
/// pool only runs them. Results go back to the main thread through whatever the job captured (the layer engine
/// uses a locked inbox and a `Waker`).
///
/// One queue of pending jobs, drained by N workers: a free worker always takes the first job in the queue's order
/// (`RenderJobQueue`). Jobs whose layer's recent renders took longer than a frame (`RenderJobInfo.isLong`) come
/// after every other job, so a short render never waits behind a long one while a worker is free, and a long
/// render starts on the last worker not running one only when nothing else waits. The strategies differ in the
/// order among the rest:
/// - `.roundRobin` (YYAsyncLayer): submission order; `drawingPriority` is ignored. (YYAsyncLayer binds each job
///   to the next serial queue in turn, which puts a clock's render behind a long text render on one worker while
///   the other has nothing to do; here no job is bound to a worker before one is free to run it.)
/// - `.priority` (AsyncDisplayKit): higher `drawingPriority` first, then submission order.
/// - `.manual`, for tests: no threads; jobs wait in `.priority`'s order until `runQueued` runs them on the
///   caller's thread, so a test can hold a job back and release it when it wants.
///
/// The workers are pthreads of the pool's own rather than Dispatch queues because libdispatch on Linux does not
/// map QoS classes to thread priorities: a `.utility` queue runs at the main thread's priority. Linux keeps a
/// nice value per thread, so each worker raises its own by `niceIncrement` and the main loop wins the CPU when
/// both are runnable.
///
/// Shared: `submit` and the counters are safe from any thread; `runQueued` runs jobs on its caller's thread.
/// Dropping the last reference discards the queued jobs and waits for the running ones to return before the
/// workers exit, so keep the pool for the life of the process (or drop it only when the jobs are short).
public final class RenderQueuePool: Sendable {
    public enum Strategy: String, Sendable, CaseIterable, Codable {
        case roundRobin = "round_robin"
        case priority
        case manual
    }

    private struct State {
        var queue: RenderJobQueue
        var nextSequence: UInt64 = 0
        var running = 0
        var stopping = false

        var queued: Int { queue.count }
    }

    private enum WorkerStep {
        case run(RenderJob)
        case exit
    }

    public let strategy: Strategy
    /// Worker threads; 0 for `.manual`.
    public let workerCount: Int
    private let state: ConditionLock<State>
    private let threads: [pthread_t]

    /// Processors online (`sysconf(_SC_NPROCESSORS_ONLN)`): the default number of workers.
    public static var activeProcessorCount: Int {
        max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// - Parameters:
    ///   - workerCount: worker threads; `nil` for one per online processor. Ignored for `.manual`.
    ///   - niceIncrement: how much lower than the creating thread's the workers' CPU priority is (nice value).
    public init(strategy: Strategy = .roundRobin, workerCount: Int? = nil, niceIncrement: Int32 = 5) {
        let workers = strategy == .manual ? 0 : max(1, workerCount ?? Self.activeProcessorCount)
        self.strategy = strategy
        self.workerCount = workers
        let state = ConditionLock(State(queue: RenderJobQueue(usesPriority: strategy != .roundRobin)))
        self.state = state
        let base = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        threads = (0..<workers).map { index in
            let start = WorkerStart(state: state, index: index, nice: min(19, base + niceIncrement))
            var thread = pthread_t()
            let status = pthread_create(&thread, nil, { raw in
                Unmanaged<WorkerStart>.fromOpaque(raw!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(start).toOpaque())
            precondition(status == 0, "\(SystemError("pthread_create (render worker \(index))", errno: status))")
            return thread
        }
    }

    deinit {
        state.withLock { $0.stopping = true }
        state.broadcast()
        for thread in threads {
            // A job that held the last reference would otherwise join its own thread.
            if pthread_equal(thread, pthread_self()) != 0 {
                pthread_detach(thread)
            } else {
                pthread_join(thread, nil)
            }
        }
    }

    /// Queues `work`. Returns at once; callable from any thread.
    public func submit(_ info: RenderJobInfo, _ work: @escaping @Sendable () -> Void) {
        submit([(info, work)])
    }

    /// Queues `jobs` together: no worker takes one before all are in the queue's order, so a long job submitted
    /// first does not start ahead of a short one submitted with it. Returns at once; callable from any thread.
    public func submit(_ jobs: [(info: RenderJobInfo, work: @Sendable () -> Void)]) {
        guard !jobs.isEmpty else { return }
        let strategy = self.strategy
        state.withLock { state in
            for (info, work) in jobs {
                state.nextSequence += 1
                state.queue.insert(RenderJob(info: info, sequence: state.nextSequence, work: work))
            }
        }
        // Workers share one condition, so a submit wakes every idle worker to re-check its queue; with about one
        // worker per core that costs little, and a condition per worker would not pay for its complexity.
        if strategy != .manual { state.broadcast() }
    }

    /// Jobs submitted and not yet started.
    public var queuedJobCount: Int { state.withLock { $0.queued } }

    /// Jobs running now.
    public var runningJobCount: Int { state.withLock { $0.running } }

    /// Queued plus running jobs.
    public var outstandingJobCount: Int { state.withLock { $0.queued + $0.running } }

    /// The queued jobs, in the order free workers will take them.
    public var queuedJobs: [RenderJobInfo] { state.withLock { $0.queue.infos } }

    /// `.manual` only: runs up to `limit` queued jobs that `isWanted` accepts, in priority order, on the calling
    /// thread; jobs it passes over stay queued. Returns how many ran.
    @discardableResult
    public func runQueued(limit: Int = .max, where isWanted: (RenderJobInfo) -> Bool = { _ in true }) -> Int {
        precondition(strategy == .manual, "RenderQueuePool.runQueued: only a .manual pool runs jobs on request")
        var ran = 0
        while ran < limit {
            let job = state.withLock { state -> RenderJob? in
                guard let job = state.queue.popFirst(where: isWanted) else { return nil }
                state.running += 1
                return job
            }
            guard let job else { break }
            job.work()
            state.withLock { $0.running -= 1 }
            ran += 1
        }
        return ran
    }

    /// Blocks the calling thread until no job is queued or running, or `timeout` passes; returns whether the pool
    /// went idle. For tests and shutdown only: the main loop must never wait on a worker.
    @discardableResult
    public func waitUntilIdle(timeout: Duration = .seconds(10)) -> Bool {
        precondition(strategy != .manual, "RenderQueuePool.waitUntilIdle: a .manual pool runs nothing by itself")
        let deadline = MonotonicInstant.now() + timeout
        // The condition has no timed wait here, so poll in short sleeps; this is a test and shutdown path.
        while MonotonicInstant.now() < deadline {
            if outstandingJobCount == 0 { return true }
            usleep(500)
        }
        return outstandingJobCount == 0
    }

    /// What one worker thread runs. Lives on its worker thread.
    private final class WorkerStart {
        let state: ConditionLock<State>
        let index: Int
        let nice: Int32

        init(state: ConditionLock<State>, index: Int, nice: Int32) {
            self.state = state; self.index = index; self.nice = nice
        }

        func run() {
            // With PRIO_PROCESS and who = 0, Linux changes the calling thread only: nice is per thread there.
            if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) != 0 {
                logger.debug("render worker \(index): setpriority(\(nice)) failed: \(errnoDescription(errno))")
            }
            while true {
                let step = state.waitUntil { state -> WorkerStep? in
                    if state.stopping { return .exit }
                    guard let job = state.queue.popFirst() else { return nil }
                    state.running += 1
                    return .run(job)
                }
                guard case .run(let job) = step else { return }
                job.work()
                state.withLock { $0.running -= 1 }
            }
        }
    }
}
