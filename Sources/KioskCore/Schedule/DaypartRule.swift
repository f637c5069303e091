import Foundation

/// An inclusive span of calendar days, `2026-12-24..2027-01-01`, or one day. A plain value.
public struct DateSpan: Sendable, Equatable, CustomStringConvertible {
    public var first: CivilDate
    public var last: CivilDate

    /// nil when `last` comes before `first`.
    public init?(first: CivilDate, last: CivilDate) {
        guard first <= last else { return nil }
        self.first = first
        self.last = last
    }

    public init(day: CivilDate) {
        first = day
        last = day
    }

    public func contains(dayNumber: Int) -> Bool { (first.dayNumber...last.dayNumber).contains(dayNumber) }

    public var description: String { first == last ? "\(first)" : "\(first)..\(last)" }
}

/// One `when:` rule of a page: on the given days of the week and dates, from one time of day to another. A window
/// whose end is not after its start crosses midnight and ends the next day; the days and dates name the day a window
/// starts on, so `{days: [fri], from: "22:00", to: "02:00"}` runs from Friday 22:00 to Saturday 02:00. With no
/// `from` the window starts at midnight; with no `to` it runs to the next midnight. Times are wall-clock times in
/// the schedule's time zone (see `TimeZone.instant(wallSeconds:)` for the days the clocks change). A plain value.
public struct DaypartRule: Sendable, Equatable {
    public var days: Set<Weekday>
    /// The dates a window may start on; empty for any date.
    public var dates: [DateSpan]
    public var from: TimeOfDay?
    public var to: TimeOfDay?

    public init(days: Set<Weekday> = Set(Weekday.allCases), dates: [DateSpan] = [], from: TimeOfDay? = nil, to: TimeOfDay? = nil) {
        self.days = days
        self.dates = dates
        self.from = from
        self.to = to
    }

    /// Whether a window starts on the local day `day` (days since 1970-01-01).
    func starts(onDay day: Int) -> Bool {
        days.contains(Weekday.of(civilDay: day)) && (dates.isEmpty || dates.contains { $0.contains(dayNumber: day) })
    }

    /// The window that starts on local day `day` in `zone`, if one does; empty windows (a start the clocks skip
    /// to the same instant as the end) are none.
    func window(startingOnDay day: Int, in zone: TimeZone) -> Range<Date>? {
        guard starts(onDay: day) else { return nil }
        let start = from?.secondsIntoDay ?? 0
        let endDay = to.map { $0.secondsIntoDay > start ? day : day + 1 } ?? day + 1
        let lower = zone.instant(wallSeconds: day * 86_400 + start)
        let upper = zone.instant(wallSeconds: endDay * 86_400 + (to?.secondsIntoDay ?? 0))
        return lower < upper ? lower..<upper : nil
    }

    /// Whether the rule holds at `date` in `zone`.
    public func holds(at date: Date, in zone: TimeZone) -> Bool {
        let today = zone.civilDay(of: date)
        return (today - 1...today).contains { window(startingOnDay: $0, in: zone)?.contains(date) ?? false }
    }

    /// The start and end instants of the rule's windows near `date` (from two days before to `days` after).
    func boundaries(near date: Date, days: Int, in zone: TimeZone) -> [Date] {
        let today = zone.civilDay(of: date)
        return (today - 2...today + days).compactMap { window(startingOnDay: $0, in: zone) }.flatMap { [$0.lowerBound, $0.upperBound] }
    }
}
