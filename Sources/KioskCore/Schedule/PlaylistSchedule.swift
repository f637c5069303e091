import Foundation

/// Which items of a video playlist may play at an instant (dayparting of items), as pure functions of the instant
/// and of whether the clock can be trusted; the same rules as pages' (`DaypartRule`, read in the scene's time zone).
/// An item with no rules always may; one with rules may while any of them holds. Of the items that may, only those
/// of the highest `priority` play (an announcement takes over the playlist). There is no fallback item: when none
/// may, the widget shows its placeholder until the next change.
///
/// Until the clock is synchronized, `unsynchronized` (the scene's, as for pages) says what happens: `.fallback`
/// plays only the items with no rules (none when every item has rules: a wrong clock must not play the breakfast
/// clip at night); `.schedule` follows the rules on the clock as it is.
///
/// The widget asks at each item boundary (`next(after:at:)`): an item whose window closes while it plays finishes
/// its clip. The same functions make `kioskd schedule`'s preview of items. A plain value; any thread.
public struct PlaylistSchedule: Sendable, Equatable {
    /// One item as the schedule sees it, in playlist order.
    public struct Entry: Sendable, Equatable {
        public var rules: [DaypartRule]
        public var priority: Int

        public init(rules: [DaypartRule] = [], priority: Int = 0) {
            self.rules = rules
            self.priority = priority
        }
    }

    public var entries: [Entry]
    public var timeZone: TimeZone
    public var unsynchronized: PageSchedule.Unsynchronized

    public init(entries: [Entry], timeZone: TimeZone = .current, unsynchronized: PageSchedule.Unsynchronized = .fallback) {
        self.entries = entries
        self.timeZone = timeZone
        self.unsynchronized = unsynchronized
    }

    /// Whether any item has rules or a priority: without, every item always plays.
    public var isActive: Bool { entries.contains { !$0.rules.isEmpty || $0.priority != 0 } }

    /// The indices of the items that may play at `date`, in playlist order: the highest priority of those whose
    /// rules hold; empty when none does.
    public func eligible(at date: Date, synchronized: Bool = true) -> [Int] {
        let holding: [Int]
        if synchronized || unsynchronized == .schedule {
            holding = entries.indices.filter { i in entries[i].rules.isEmpty || entries[i].rules.contains { $0.holds(at: date, in: timeZone) } }
        } else {
            holding = entries.indices.filter { entries[$0].rules.isEmpty }
        }
        guard let top = holding.map({ entries[$0].priority }).max() else { return [] }
        return holding.filter { entries[$0].priority == top }
    }

    /// The item to play after item `index` ends at `date`: the next that may play, later in the playlist; nil at the
    /// end of the playlist (the caller loops with `first(at:)`, or stops). With `index` nil, the first that may.
    public func next(after index: Int?, at date: Date, synchronized: Bool = true) -> Int? {
        eligible(at: date, synchronized: synchronized).first { index == nil || $0 > index! }
    }

    /// The first item that may play at `date`, at or after `index` in playlist order, else the first from the top.
    public func first(from index: Int = 0, at date: Date, synchronized: Bool = true) -> Int? {
        let shown = eligible(at: date, synchronized: synchronized)
        return shown.first { $0 >= index } ?? shown.first
    }

    /// The first instant after `date` at which the items that may play can change (a rule's window opens or
    /// closes), within the next eight days; nil when none does.
    public func nextChange(after date: Date) -> Date? {
        entries.flatMap(\.rules).flatMap { $0.boundaries(near: date, days: 8, in: timeZone) }.filter { $0 > date }.min()
    }

    /// One line of a preview: from `start`, the items at `items` (indices, playlist order) may play; none when empty.
    public struct Eligibility: Sendable, Equatable {
        public var start: Date
        public var items: [Int]

        public init(start: Date, items: [Int]) {
            self.start = start
            self.items = items
        }
    }

    /// The items that may play from `start` to `end` (exclusive), with the clock synchronized: the set at `start`,
    /// then each change of it. Stops after `limit` lines.
    public func preview(from start: Date, to end: Date, limit: Int = 100_000) -> [Eligibility] {
        var result = [Eligibility(start: start, items: eligible(at: start))]
        var instant = start
        while result.count < limit {
            // No change within the week ahead: look again a week on.
            let change = nextChange(after: instant) ?? instant.addingTimeInterval(7 * 86_400)
            guard change < end else { break }
            instant = change
            let items = eligible(at: instant)
            if items != result.last?.items { result.append(Eligibility(start: instant, items: items)) }
        }
        return result
    }
}
