import Logging

/// What came back from one render job. Built on a render worker after its last write to the surface and handed to
/// the main thread through `RenderInbox`; immutable from then on (`LayerSurface` is published the same way).
struct RenderOutput: Sendable {
    enum Result: Sendable {
        case surface(LayerSurface)
        /// The sentinel was invalidated before or while drawing (the result can never be shown); the worker stopped
        /// early.
        case cancelled
        case failed(String)
        /// A plain fill (`Layer.isSurfaceless`): nothing was rendered, the compositor draws the content.
        case drawnByCompositor
    }

    let renderID: UInt64
    let result: Result
    /// Time spent drawing, for `render_ms`.
    let duration: Duration

    /// Renders `work` unless `capture` is already cancelled. Runs on a render worker, or on the main thread for a
    /// synchronous layer.
    static func render(_ work: RenderWork, size: Size, capture: Sentinel.Capture, renderID: UInt64,
                       clock: RenderClock = .monotonic) -> RenderOutput {
        let start = clock.now()
        let result: Result
        if capture.isCancelled() {
            // Overtaken while queued: skip the drawing altogether.
            result = .cancelled
        } else {
            do {
                let surface = try work.render(size: size, isCancelled: capture.isCancelled)
                result = capture.isCancelled() ? .cancelled : .surface(surface)
            } catch {
                result = .failed("\(error)")
            }
        }
        return RenderOutput(renderID: renderID, result: result, duration: clock.now() - start)
    }
}

/// Where a render reads the time it took: the monotonic clock, or a test's manual one (`LayerEngine.renderClock`).
/// Read on render workers.
public struct RenderClock: Sendable {
    public let now: @Sendable () -> MonotonicInstant

    public init(now: @escaping @Sendable () -> MonotonicInstant) { self.now = now }

    public static let monotonic = RenderClock { MonotonicInstant.now() }
}

/// A layer's last few render times. The shortest of them decides whether its next render is known to be long: a
/// render takes longer than its drawing whenever its worker is preempted (other processes, the main thread), never
/// shorter, so one preempted render of a small widget does not make it look long. Main thread, on its layer.
struct RecentRenderTimes {
    static let kept = 4
    private var times: [Duration] = []
    private var next = 0

    mutating func record(_ duration: Duration) {
        if times.count < Self.kept {
            times.append(duration)
        } else {
            times[next] = duration
        }
        next = (next + 1) % Self.kept
    }

    /// The shortest of the recent times; nil before the first render finished.
    var shortest: Duration? { times.min() }
}

/// Finished renders on their way to the main thread: workers append and wake the loop's waker; the commit observer
/// drains. Shared by the workers and the main thread, behind a pthread lock that ThreadSanitizer models.
final class RenderInbox: Sendable {
    private let outputs = Lock<[RenderOutput]>([])
    private let waker: Waker

    init(waker: Waker) { self.waker = waker }

    /// From a render worker: hands `output` over and wakes the main loop.
    func deliver(_ output: RenderOutput) {
        outputs.withLock { $0.append(output) }
        waker.wake()
    }

    /// On the main thread: everything delivered so far, oldest first.
    func drain() -> [RenderOutput] {
        outputs.withLock { list in
            defer { list.removeAll() }
            return list
        }
    }
}

/// A render that was dispatched and has not come back. Lives on the main thread, in the engine's table of renders
/// in flight; the job on the worker knows only its id, so the layer is held weakly here and nowhere else.
final class RenderRequest {
    let id: UInt64
    weak var layer: Layer?
    let capture: Sentinel.Capture
    let kind: String
    /// The transaction group holding the result back, by the group layer's identity (the group's state outlives
    /// its layer, so results of a freed group still land).
    let groupID: ObjectIdentifier?
    let label: String
    /// Drawn on the render pool (not a plain fill, not a synchronous layer).
    let onPool: Bool
    /// Known to be long at dispatch (`RenderJobInfo.isLong`).
    let isLong: Bool

    init(id: UInt64, layer: Layer, capture: Sentinel.Capture, kind: String, groupID: ObjectIdentifier?, label: String,
         onPool: Bool, isLong: Bool) {
        self.id = id
        self.layer = layer
        self.capture = capture
        self.kind = kind
        self.groupID = groupID
        self.label = label
        self.onPool = onPool
        self.isLong = onPool && isLong
    }
}

/// A transaction group waiting for its renders (AsyncDisplayKit's `_ASAsyncTransactionGroup`). Lives on the main
/// thread in the engine, from the first render dispatched under the group until all of them have come back.
final class TransactionGroupState {
    weak var layer: Layer?
    /// Renders dispatched under the group and not yet back.
    var pending: Set<UInt64> = []
    /// The layers that joined, each with its first render only.
    var members: Set<ObjectIdentifier> = []
    /// Results that came back and wait for the rest, in arrival order.
    var ready: [(request: RenderRequest, surface: LayerSurface?)] = []

    init(layer: Layer) { self.layer = layer }

    /// Whether the group can let its results through: everything is back, the group is gone, or it stopped holding.
    var canRelease: Bool {
        guard let layer, layer.holdsChildrenUntilReady else { return true }
        return pending.isEmpty
    }
}
