import KioskCore

/// Per-URL backoff after failures: each URL its own `RetryBackoff` (1 s doubling to `maximum`, jittered), so one
/// server that is down is asked less and less often while the others keep their own pace; a success resets it.
/// Main thread.
public struct FetchBackoff {
    private var byURL: [String: RetryBackoff] = [:]
    private let make: () -> RetryBackoff

    public init(initial: Duration = .seconds(1), maximum: Duration = .seconds(300),
                random: @escaping () -> Double = { Double.random(in: 0...1) }) {
        make = { RetryBackoff(initial: initial, maximum: maximum, random: random) }
    }

    /// The wait before `url` is tried again after another failure.
    public mutating func failed(_ url: String) -> Duration {
        var backoff = byURL[url] ?? make()
        let delay = backoff.nextDelay()
        byURL[url] = backoff
        return delay
    }

    /// Failures of `url` in a row so far.
    public func failures(_ url: String) -> Int { byURL[url]?.failures ?? 0 }

    public mutating func succeeded(_ url: String) {
        byURL.removeValue(forKey: url)
    }
}
