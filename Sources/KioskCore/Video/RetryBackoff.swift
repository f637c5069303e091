/// How long to wait before trying a failed network item again: jittered exponential backoff. The n-th delay in a
/// row (from 0) has the step `initial · 2ⁿ`, capped at `maximum`; the delay is drawn at random within ±`jitter` of
/// its step and never exceeds `maximum`. `reset()` (after a successful play) starts again from `initial`.
///
/// Why jitter: a fleet of kiosks that lost the same server at the same moment would otherwise knock on it again in
/// step, every time, when it comes back. Why a cap: a stream that failed because the network was not up yet must
/// come back within a minute of the network, however long the outage was.
///
/// The random source is injected (a draw in 0...1: 0 is the shortest delay of a step, 1 the longest) so tests know
/// each delay; the delays are waited for on the main loop's timers, so tests run them on the loop's manual clock.
/// A value owned by one video widget; main thread.
public struct RetryBackoff {
    /// The first delay's step.
    public let initial: Duration
    /// No delay is longer.
    public let maximum: Duration
    /// The fraction of a step a delay may differ from it by, either way (0.25: 75 % to 125 % of the step).
    public let jitter: Double
    /// Delays handed out since the last reset.
    public private(set) var failures = 0
    private let random: () -> Double

    /// 1 s doubling to 60 s, ±25 %: a stream is back within a second or two of a brief outage, and a kiosk that
    /// waits for a server down for hours asks about once a minute.
    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(60), jitter: Double = 0.25,
                random: @escaping () -> Double = { Double.random(in: 0...1) }) {
        precondition(initial > .zero && maximum >= initial, "RetryBackoff: 0 < initial <= maximum")
        precondition((0..<1).contains(jitter), "RetryBackoff: jitter is a fraction below 1")
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
        self.random = random
    }

    /// The step of the delay after `failures` delays in a row: `initial · 2^failures`, at most `maximum`.
    public func step(after failures: Int) -> Duration {
        let seconds = min(Self.seconds(initial) * Double(1 << min(failures, 40)), Self.seconds(maximum))
        return Self.duration(seconds)
    }

    /// The range the delay after `failures` delays in a row is drawn from.
    public func bounds(after failures: Int) -> ClosedRange<Duration> {
        let step = Self.seconds(step(after: failures))
        let maximum = Self.seconds(maximum)
        return Self.duration(step * (1 - jitter))...Self.duration(min(step * (1 + jitter), maximum))
    }

    /// The next delay; counts a failure.
    public mutating func nextDelay() -> Duration {
        let step = Self.seconds(step(after: failures))
        failures += 1
        let sample = random()
        let draw = sample.isFinite ? min(max(sample, 0), 1) : 0.5
        let factor = 1 + jitter * (2 * draw - 1)
        return Self.duration(min(step * factor, Self.seconds(maximum)))
    }

    /// After a success: the next failure waits `initial` (jittered) again.
    public mutating func reset() {
        failures = 0
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }

    /// Whole milliseconds: timers need no finer, and delays compare exactly in tests.
    private static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
