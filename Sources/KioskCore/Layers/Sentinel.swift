import Synchronization

/// A per-layer generation counter (YYSentinel), refined for continuous updates.
///
/// `Layer.setNeedsRender()` increases it: a render captures the value when it is dispatched, and a newer request
/// makes that capture *superseded*. YYAsyncLayer treats superseded as cancelled; kioskd does not, because a layer
/// updated faster than it renders would then never show anything. A superseded render still runs to completion and
/// is shown unless something newer has been shown meanwhile (the engine compares generations when it applies it).
///
/// A capture is *cancelled* only once its result is certain never to be shown: the layer was freed or its content
/// removed (`invalidate()`). Workers read `isCancelled` between drawing steps to give up early.
///
/// Shared between the main thread, which increases and invalidates it, and render workers, which read it; both
/// counters are atomic for that reason.
public final class Sentinel: Sendable {
    private let counter = Atomic<UInt64>(0)
    /// Captures with a value below this can never be shown.
    private let floor = Atomic<UInt64>(0)

    public init() {}

    /// The current generation.
    public var value: UInt64 { counter.load(ordering: .acquiring) }

    /// Starts a new generation: a newer request. Captures of older generations are superseded but not cancelled.
    /// Returns the new value.
    @discardableResult
    public func increase() -> UInt64 {
        counter.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
    }

    /// Starts a new generation and cancels every capture of an older one: what they draw can never be shown (the
    /// layer is gone, or its content was removed).
    public func invalidate() {
        floor.store(increase(), ordering: .releasing)
    }

    /// The current generation, for a render about to be dispatched.
    public func capture() -> Capture {
        Capture(sentinel: self, value: value)
    }

    /// One captured generation. A plain value that a render carries to its worker and back.
    public struct Capture: Sendable {
        public let sentinel: Sentinel
        public let value: UInt64

        /// Whether the render this capture belongs to can never be shown: stop drawing, drop the result.
        public func isCancelled() -> Bool {
            value < sentinel.floor.load(ordering: .acquiring)
        }

        /// Whether a newer request was made since the capture. The render is still worth finishing and showing.
        public func isSuperseded() -> Bool {
            sentinel.value != value
        }
    }
}
