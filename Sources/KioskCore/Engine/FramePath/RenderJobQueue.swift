/// What the pool knows about a render job besides its closure: enough to order it and, in tests, to pick it out.
/// A plain value.
public struct RenderJobInfo: Sendable, Hashable, CustomStringConvertible {
    /// The layer's name, or its content kind when it has none.
    public var label: String
    /// The content kind, as telemetry groups render times (`text`, `image`, `rasterized`).
    public var kind: String
    /// `Layer.drawingPriority` at dispatch: higher runs first under `.priority` and `.manual`.
    public var priority: Int
    /// Each of the layer's recent renders took longer than a frame (`Layer.recentRenderTimes`): the job waits
    /// while any job not known to be long waits (`RenderJobQueue`).
    public var isLong: Bool

    public init(label: String, kind: String, priority: Int = 0, isLong: Bool = false) {
        self.label = label; self.kind = kind; self.priority = priority; self.isLong = isLong
    }

    public var description: String { "\(label) (\(kind), priority \(priority)\(isLong ? ", long" : ""))" }
}

/// One submitted job. Crosses from the submitting thread to a worker inside the pool's lock.
struct RenderJob: Sendable {
    let info: RenderJobInfo
    /// Submission order: FIFO among equals.
    let sequence: UInt64
    let work: @Sendable () -> Void
}

/// The jobs waiting for a worker, in the order free workers take them: a job not known to be long before a long
/// one, then (under `.priority`) higher `drawingPriority` first, then submission order. A short render is never
/// queued behind a long one: the scheduling rule of a screen where one widget's render takes many frames and the
/// others' a fraction of one. Guarded by the pool's lock; holds about one job per layer, so a sorted array is
/// enough.
struct RenderJobQueue {
    /// Whether `drawingPriority` orders jobs of the same class (`.priority`, `.manual`) or only submission order
    /// does (`.roundRobin`).
    let usesPriority: Bool
    private var jobs: [RenderJob] = []

    init(usesPriority: Bool) { self.usesPriority = usesPriority }

    var count: Int { jobs.count }
    var isEmpty: Bool { jobs.isEmpty }

    /// Whether `a` runs before `b`.
    private func precedes(_ a: RenderJob, _ b: RenderJob) -> Bool {
        if a.info.isLong != b.info.isLong { return !a.info.isLong }
        if usesPriority, a.info.priority != b.info.priority { return a.info.priority > b.info.priority }
        return a.sequence < b.sequence
    }

    mutating func insert(_ job: RenderJob) {
        var low = 0, high = jobs.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(jobs[middle], job) { low = middle + 1 } else { high = middle }
        }
        jobs.insert(job, at: low)
    }

    /// Removes and returns the first job in run order. Since long jobs come last, a worker starts one only when
    /// nothing else waits: with N workers, at most N - 1 run long renders while a shorter one waits.
    mutating func popFirst() -> RenderJob? {
        jobs.isEmpty ? nil : jobs.removeFirst()
    }

    /// Removes and returns the first job, in run order, that `isWanted` accepts.
    mutating func popFirst(where isWanted: (RenderJobInfo) -> Bool) -> RenderJob? {
        guard let index = jobs.firstIndex(where: { isWanted($0.info) }) else { return nil }
        return jobs.remove(at: index)
    }

    /// Queued jobs in the order they would run.
    var infos: [RenderJobInfo] { jobs.map(\.info) }
}
