/// What the pool knows about a render job besides its closure: enough to order it and, in tests, to pick it out.
/// A plain value.
public struct RenderJobInfo: Sendable, Hashable, CustomStringConvertible {
    /// The layer's name, or its content kind when it has none.
    public var label: String
    /// The content kind, as telemetry groups render times (`text`, `image`, `rasterized`).
    public var kind: String
    /// `Layer.drawingPriority` at dispatch: higher runs first under `.priority` and `.manual`.
    public var priority: Int

    public init(label: String, kind: String, priority: Int = 0) {
        self.label = label; self.kind = kind; self.priority = priority
    }

    public var description: String { "\(label) (\(kind), priority \(priority))" }
}

/// One submitted job. Crosses from the submitting thread to a worker inside the pool's lock.
struct RenderJob: Sendable {
    let info: RenderJobInfo
    /// Submission order: FIFO among equal priorities.
    let sequence: UInt64
    let work: @Sendable () -> Void
}

/// A FIFO of jobs: one serial queue of the round-robin strategy. Amortised O(1) without moving the whole array
/// on each pop. Guarded by the pool's lock.
struct RenderJobFIFO {
    private var jobs: [RenderJob] = []
    private var head = 0

    var count: Int { jobs.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func append(_ job: RenderJob) { jobs.append(job) }

    mutating func popFirst() -> RenderJob? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        head += 1
        if head >= 32, head * 2 >= jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    var infos: [RenderJobInfo] { jobs[head...].map(\.info) }
}

/// A binary max-heap of jobs ordered by priority, then submission order: AsyncDisplayKit's display queue, where a
/// layer's `drawingPriority` decides which queued render a free worker takes next. Guarded by the pool's lock.
struct RenderJobHeap {
    private var jobs: [RenderJob] = []

    var count: Int { jobs.count }
    var isEmpty: Bool { jobs.isEmpty }

    /// Whether `a` runs before `b`.
    private static func precedes(_ a: RenderJob, _ b: RenderJob) -> Bool {
        a.info.priority != b.info.priority ? a.info.priority > b.info.priority : a.sequence < b.sequence
    }

    mutating func insert(_ job: RenderJob) {
        jobs.append(job)
        siftUp(from: jobs.count - 1)
    }

    mutating func popFirst() -> RenderJob? {
        guard !jobs.isEmpty else { return nil }
        jobs.swapAt(0, jobs.count - 1)
        let first = jobs.removeLast()
        siftDown(from: 0)
        return first
    }

    /// Removes and returns the first job, in run order, that `isWanted` accepts.
    mutating func popFirst(where isWanted: (RenderJobInfo) -> Bool) -> RenderJob? {
        let ordered = jobs.indices.sorted { Self.precedes(jobs[$0], jobs[$1]) }
        guard let index = ordered.first(where: { isWanted(jobs[$0].info) }) else { return nil }
        jobs.swapAt(index, jobs.count - 1)
        let job = jobs.removeLast()
        if index < jobs.count {
            siftDown(from: index)
            siftUp(from: index)
        }
        return job
    }

    /// Queued jobs in the order they would run.
    var infos: [RenderJobInfo] {
        jobs.sorted(by: Self.precedes).map(\.info)
    }

    private mutating func siftUp(from index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(jobs[child], jobs[parent]) else { break }
            jobs.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var first = parent
            if left < jobs.count, Self.precedes(jobs[left], jobs[first]) { first = left }
            if right < jobs.count, Self.precedes(jobs[right], jobs[first]) { first = right }
            guard first != parent else { return }
            jobs.swapAt(parent, first)
            parent = first
        }
    }
}
