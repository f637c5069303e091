import Synchronization

/// A per-layer generation counter (YYSentinel). `Layer.setNeedsDisplay()` increases it; a render captures the
/// value when it is dispatched and is stale as soon as the counter has moved on, so a result that was overtaken by
/// a newer request, or whose layer was freed, is never shown.
///
/// Shared between the main thread, which increases it, and render workers, which read it between drawing steps to
/// give up early; the counter is atomic for that reason.
public final class Sentinel: Sendable {
    private let counter = Atomic<UInt64>(0)

    public init() {}

    /// The current generation.
    public var value: UInt64 { counter.load(ordering: .acquiring) }

    /// Starts a new generation, cancelling every capture of an older one. Returns the new value.
    @discardableResult
    public func increase() -> UInt64 {
        counter.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
    }

    /// The current generation, for a render about to be dispatched.
    public func capture() -> Capture {
        Capture(sentinel: self, value: value)
    }

    /// One captured generation. A plain value that a render carries to its worker and back.
    public struct Capture: Sendable {
        public let sentinel: Sentinel
        public let value: UInt64

        /// Whether the sentinel moved on since the capture: the render it belongs to will not be shown.
        public func isCancelled() -> Bool {
            sentinel.value != value
        }
    }
}
