import Dispatch

/// Work the main loop must not do (parsing and measuring a scene, encoding and writing a screenshot): it runs
/// in order on one serial utility queue, and its result comes back to the loop thread through a waker.
///
/// Lives on the main thread; only the work closures and their `Sendable` results cross to the queue and back.
public final class BackgroundJobs {
    private let queue: DispatchQueue
    private let finished = Lock<[(id: Int, result: any Sendable)]>([])
    private var continuations: [Int: (any Sendable) -> Void] = [:]
    private var nextID = 0
    private var waker: Waker?

    /// `label` names the queue (in debuggers and thread listings).
    public init(loop: MainLoop, label: String) throws {
        queue = DispatchQueue(label: label, qos: .utility)
        waker = try loop.makeWaker { [weak self] in self?.deliverFinished() }
    }

    /// Runs `work` on the queue, then `completion` with its result on the loop thread.
    public func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result, then completion: @escaping (Result) -> Void) {
        let id = nextID
        nextID += 1
        continuations[id] = { completion($0 as! Result) }
        let finished = self.finished, waker = self.waker
        queue.async {
            let result = work()
            finished.withLock { $0.append((id, result)) }
            waker?.wake()
        }
    }

    private func deliverFinished() {
        let done = finished.withLock { list in
            let taken = list
            list = []
            return taken
        }
        for (id, result) in done { continuations.removeValue(forKey: id)?(result) }
    }
}
