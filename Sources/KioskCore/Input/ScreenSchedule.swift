import Foundation

/// A time of day on the wall clock, `HH:MM` (00:00 to 23:59). A plain value.
public struct TimeOfDay: Sendable, Equatable, Comparable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int

    public init?(hour: Int, minute: Int) {
        guard (0...23).contains(hour), (0...59).contains(minute) else { return nil }
        self.hour = hour
        self.minute = minute
    }

    /// `7:00`, `07:00`, `22:30`; nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        self.init(hour: hour, minute: minute)
    }

    var secondsIntoDay: Int { hour * 3600 + minute * 60 }

    public static func < (a: TimeOfDay, b: TimeOfDay) -> Bool { a.secondsIntoDay < b.secondsIntoDay }

    public var description: String { String(format: "%02d:%02d", hour, minute) }
}

/// A day of the week as schedules spell it.
public enum Weekday: String, Sendable, CaseIterable, Comparable {
    case mon, tue, wed, thu, fri, sat, sun

    public static func < (a: Weekday, b: Weekday) -> Bool { a.index < b.index }

    /// Monday 0 ... Sunday 6.
    var index: Int { Self.allCases.firstIndex(of: self)! }

    /// The weekday of a civil day counted from 1970-01-01, a Thursday.
    static func of(civilDay day: Int) -> Weekday { allCases[((day % 7) + 7 + 3) % 7] }
}

/// One line of a screen timetable: the screen goes off at `off` on each of `days` and on again at the next `on`
/// (the next morning when `on` is not later than `off`). A plain value.
public struct ScreenScheduleEntry: Sendable, Equatable {
    public var off: TimeOfDay
    public var on: TimeOfDay
    /// The days the off time falls on.
    public var days: Set<Weekday>

    public init(off: TimeOfDay, on: TimeOfDay, days: Set<Weekday> = Set(Weekday.allCases)) {
        self.off = off
        self.on = on
        self.days = days
    }
}

/// When the screen is off by the clock (`idle.schedule`): windows of wall-clock time in a time zone, so a kiosk
/// that blanks at 22:00 does so at 22:00 local time in winter and in summer. Pure functions of an instant.
///
/// Across a daylight-saving change: a time the clocks skip (02:30 on the night they go forward) happens at the
/// moment of the change, the first moment after the gap; a time that happens twice (02:30 on the night they go
/// back) happens the first time. A plain value; any thread.
public struct ScreenSchedule: Sendable, Equatable {
    public var entries: [ScreenScheduleEntry]
    public var timeZone: TimeZone

    public init(entries: [ScreenScheduleEntry], timeZone: TimeZone = .current) {
        self.entries = entries
        self.timeZone = timeZone
    }

    /// Whether the timetable has the screen off at `date`.
    public func isOff(at date: Date) -> Bool {
        windows(around: date).contains { $0.contains(date) }
    }

    /// The next instant after `date` at which the timetable turns the screen off or on; nil when it never does.
    public func nextChange(after date: Date) -> Date? {
        windows(around: date).flatMap { [$0.lowerBound, $0.upperBound] }.filter { $0 > date }.min()
    }

    /// The off windows from two days before to eight days after `date`, merged where they overlap or touch: every
    /// boundary of the result is a change.
    func windows(around date: Date) -> [Range<Date>] {
        let today = Self.civilDay(ofWallSeconds: Int(date.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: date))
        var windows: [Range<Date>] = []
        for day in (today - 2)...(today + 8) {
            let weekday = Weekday.of(civilDay: day)
            for entry in entries where entry.days.contains(weekday) {
                let start = instant(wallSeconds: day * 86_400 + entry.off.secondsIntoDay)
                let endDay = entry.on > entry.off ? day : day + 1
                let end = instant(wallSeconds: endDay * 86_400 + entry.on.secondsIntoDay)
                if start < end { windows.append(start..<end) }
            }
        }
        windows.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Date>] = []
        for window in windows {
            if let last = merged.last, window.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, window.upperBound)
            } else {
                merged.append(window)
            }
        }
        return merged
    }

    /// The instant the wall clock of the time zone shows `wallSeconds` (seconds since 1970-01-01 00:00 local).
    func instant(wallSeconds wall: Int) -> Date { timeZone.instant(wallSeconds: wall) }

    static func civilDay(ofWallSeconds seconds: Int) -> Int {
        seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }
}
