/// A member's estimate of the sync group's clock from time exchanges with the leader, NTP's way: the follower
/// stamps a request when it leaves (`t0`, its own clock), the leader when it arrives (`t1`) and when the answer
/// leaves (`t2`, both on the group clock), the follower when the answer arrives (`t3`). Each exchange gives the
/// offset (group minus local) as the middle of the two legs and the round trip's delay; a leg that waited in a
/// queue (the broker's, a busy loop's) makes that exchange's offset wrong by up to half its extra delay, so only
/// the exchanges with the shortest delays of the window are trusted, as NTP's clock filter does.
///
/// The trusted exchanges are fitted with a line (offset and rate), so a local oscillator that runs fast or slow
/// (100 ppm is 6 ms a minute) is followed between exchanges rather than corrected in steps. A plain value; one
/// thread.
public struct SyncClockEstimator: Sendable {
    /// One exchange: when it ended (local clock), the offset it measured and its round trip.
    public struct Sample: Sendable, Equatable {
        public var local: Int64
        public var offset: Int64
        public var delay: Int64
    }

    /// Exchanges kept.
    public static let window = 16
    /// An exchange is trusted when its delay is within this of the window's shortest.
    public static let delayMargin: Int64 = 1_000_000
    /// A rate beyond this (parts per million) is taken for noise, not an oscillator: the fit falls back to the
    /// newest trusted offset.
    public static let maximumRatePPM = 500.0

    public private(set) var samples: [Sample] = []
    /// The fitted line: the offset at `reference` (local) and its change per local nanosecond.
    public private(set) var reference: Int64 = 0
    public private(set) var offsetAtReference: Int64 = 0
    public private(set) var rate = 0.0
    /// The root mean square of the trusted exchanges' distance from the line, in nanoseconds: the estimate's jitter.
    public private(set) var jitter: Int64 = 0

    public init() {}

    /// Whether any exchange has been made: before one, the group's time is unknown.
    public var hasEstimate: Bool { !samples.isEmpty }

    /// Adds the exchange `t0`…`t3` (t0 and t3 on the local clock, t1 and t2 on the group's). One whose answer
    /// left before its request arrived, or that ended before it started, is not an exchange and is ignored.
    public mutating func add(t0: Int64, t1: Int64, t2: Int64, t3: Int64) {
        guard t3 >= t0, t2 >= t1 else { return }
        let delay = (t3 - t0) - (t2 - t1)
        let offset = ((t1 - t0) &+ (t2 - t3)) / 2
        samples.append(Sample(local: t3, offset: offset, delay: max(delay, 0)))
        if samples.count > Self.window { samples.removeFirst(samples.count - Self.window) }
        fit()
    }

    /// Forgets every exchange (another leader: its clock is another line).
    public mutating func reset() {
        samples = []
        (reference, offsetAtReference, rate, jitter) = (0, 0, 0, 0)
    }

    /// Group time minus local time at the local instant `local`.
    public func offset(at local: Int64) -> Int64 {
        offsetAtReference &+ Int64((Double(local &- reference) * rate).rounded())
    }

    /// The group's time at the local instant `local`.
    public func groupTime(at local: Int64) -> Int64 { local &+ offset(at: local) }

    /// The exchanges trusted now: those within `delayMargin` of the shortest round trip.
    public var trusted: [Sample] {
        guard let shortest = samples.map(\.delay).min() else { return [] }
        return samples.filter { $0.delay <= shortest + Self.delayMargin }
    }

    private mutating func fit() {
        let kept = trusted
        guard let newest = kept.last else { return }
        reference = newest.local
        offsetAtReference = newest.offset
        rate = 0
        if kept.count >= 3, let first = kept.first, newest.local - first.local > 0 {
            // Least squares about the newest exchange, in seconds and microseconds to keep the sums small.
            let xs = kept.map { Double($0.local - newest.local) / 1e9 }
            let ys = kept.map { Double($0.offset - newest.offset) / 1e3 }
            let n = Double(kept.count)
            let mx = xs.reduce(0, +) / n, my = ys.reduce(0, +) / n
            var sxx = 0.0, sxy = 0.0
            for (x, y) in zip(xs, ys) {
                sxx += (x - mx) * (x - mx)
                sxy += (x - mx) * (y - my)
            }
            if sxx > 0 {
                let slope = sxy / sxx  // microseconds per second: ppm
                if abs(slope) <= Self.maximumRatePPM {
                    rate = slope / 1e6
                    offsetAtReference = newest.offset + Int64(((my - slope * mx) * 1e3).rounded())
                }
            }
        }
        var squares = 0.0
        for sample in kept {
            let residual = Double(sample.offset - offset(at: sample.local))
            squares += residual * residual
        }
        jitter = Int64((squares / Double(kept.count)).squareRoot().rounded())
    }
}
