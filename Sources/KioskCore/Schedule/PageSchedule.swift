import Foundation

/// Which pages a scene's timed loop may show at an instant (dayparting), as pure functions of the instant and of
/// whether the clock can be trusted. A page with no rules always may; one with rules may while any of them holds.
/// Of the pages that may, only those of the highest `priority` are shown (an announcement takes over). When no
/// page may, the `fallback` page is shown (it is never in the loop otherwise); with no fallback, what is on screen
/// stays. Until the clock is synchronized, `unsynchronized` says what happens (by default the fallback page: a
/// wrong clock must not show the breakfast menu at night).
///
/// The loop (`turn`, `settle`) is the same for the stage on screen and for `kioskd schedule`'s preview, so the
/// preview shows what the screen will. A plain value; any thread.
public struct PageSchedule: Sendable, Equatable {
    /// One page as the schedule sees it, in scene order.
    public struct Entry: Sendable, Equatable {
        public var name: String
        public var rules: [DaypartRule]
        public var priority: Int
        /// Seconds on screen in the timed loop; nil for a page that leaves only when its window closes.
        public var duration: Double?

        public init(name: String, rules: [DaypartRule] = [], priority: Int = 0, duration: Double? = nil) {
            self.name = name
            self.rules = rules
            self.priority = priority
            self.duration = duration
        }
    }

    /// What the schedule does while the clock is not synchronized.
    public enum Unsynchronized: String, Sendable, Equatable, CaseIterable {
        /// Show the fallback page (or, with none, the pages with no rules).
        case fallback
        /// Follow the rules on the clock as it is.
        case schedule
    }

    public var entries: [Entry]
    public var fallback: String?
    public var timeZone: TimeZone
    public var unsynchronized: Unsynchronized

    public init(entries: [Entry], fallback: String? = nil, timeZone: TimeZone = .current, unsynchronized: Unsynchronized = .fallback) {
        self.entries = entries
        self.fallback = fallback
        self.timeZone = timeZone
        self.unsynchronized = unsynchronized
    }

    /// Whether any page has rules or a priority, or there is a fallback: without, every page is always shown.
    public var isActive: Bool { fallback != nil || entries.contains { !$0.rules.isEmpty || $0.priority != 0 } }

    /// The pages of the loop at `date`, in scene order: the highest priority of those whose rules hold, else the
    /// fallback, else none (what is on screen stays).
    public func pages(at date: Date, synchronized: Bool = true) -> [String] {
        let candidates = entries.filter { $0.name != fallback }
        let holding: [Entry]
        if synchronized || unsynchronized == .schedule {
            holding = candidates.filter { $0.rules.isEmpty || $0.rules.contains { $0.holds(at: date, in: timeZone) } }
        } else {
            holding = fallback == nil ? candidates.filter { $0.rules.isEmpty } : []
        }
        if let top = holding.map(\.priority).max() { return holding.filter { $0.priority == top }.map(\.name) }
        return fallback.map { [$0] } ?? []
    }

    /// The page to show first at `date`; nil when none is (keep the scene's first page).
    public func firstPage(at date: Date, synchronized: Bool = true) -> String? {
        pages(at: date, synchronized: synchronized).first
    }

    /// The timed loop's turn from `current` at `date`: the next page in scene order of those shown at `date`,
    /// wrapping; `current` itself when it is the only one; nil when none is (stay).
    public func turn(from current: String, at date: Date, synchronized: Bool = true) -> String? {
        let shown = Set(pages(at: date, synchronized: synchronized))
        guard !shown.isEmpty else { return nil }
        let order = entries.map(\.name)
        guard let index = order.firstIndex(of: current) else { return order.first { shown.contains($0) } }
        for step in 1...order.count where shown.contains(order[(index + step) % order.count]) {
            return order[(index + step) % order.count]
        }
        return nil
    }

    /// For a page that does not leave by itself (no duration): the page to change to at `date` when `current` is no
    /// longer shown then; nil to stay.
    public func settle(_ current: String, at date: Date, synchronized: Bool = true) -> String? {
        let shown = pages(at: date, synchronized: synchronized)
        guard !shown.isEmpty, !shown.contains(current) else { return nil }
        return shown.first
    }

    /// The first instant after `date` at which the pages shown may change (a rule's window opens or closes), within
    /// the next eight days; nil when none does.
    public func nextChange(after date: Date) -> Date? {
        entries.flatMap { $0.rules }.flatMap { $0.boundaries(near: date, days: 8, in: timeZone) }.filter { $0 > date }.min()
    }

    /// One line of a preview: `page` goes on screen at `start`.
    public struct Showing: Sendable, Equatable {
        public var start: Date
        public var page: String
    }

    /// The pages the timed loop shows from `start` to `end` (exclusive), with the clock synchronized: the first at
    /// `start`, then each change. A timed page leaves at its turn; one with no duration when its window closes.
    /// Stops after `limit` changes.
    public func preview(from start: Date, to end: Date, firstPage: String, limit: Int = 100_000) -> [Showing] {
        let durations = Dictionary(entries.map { ($0.name, $0.duration) }, uniquingKeysWith: { a, _ in a })
        var current = self.firstPage(at: start) ?? firstPage
        // Milliseconds from `start`, as the loop's timers count a page's duration.
        var elapsed: Int64 = 0
        func instant() -> Date { start.addingTimeInterval(Double(elapsed) / 1000) }
        var result = [Showing(start: start, page: current)]
        while instant() < end, result.count < limit {
            if let seconds = durations[current] ?? nil {
                elapsed += Int64(seconds * 1000)
                guard instant() < end else { break }
                if let next = turn(from: current, at: instant()), next != current {
                    current = next
                    result.append(Showing(start: instant(), page: next))
                }
            } else {
                // No change within the week ahead: look again a week on, as the stage looks again.
                let change = nextChange(after: instant()) ?? instant().addingTimeInterval(7 * 86_400)
                guard change < end else { break }
                elapsed = Int64((change.timeIntervalSince(start) * 1000).rounded())
                if let next = settle(current, at: instant()) {
                    current = next
                    result.append(Showing(start: instant(), page: next))
                }
            }
        }
        return result
    }
}
