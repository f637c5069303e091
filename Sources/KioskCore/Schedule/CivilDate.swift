import Foundation

/// A day of the calendar with no time zone: `2026-12-24`. Proleptic Gregorian, years 1 to 9999. A plain value.
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...Self.daysIn(month: month, year: year)).contains(day) else {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// `2026-12-24` (four-digit year, two-digit month and day); nil for anything else, a 30 February among them.
    public init?(parsing text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// The date `number` days after 1970-01-01 (negative before it).
    public init(dayNumber number: Int) {
        // Howard Hinnant's civil_from_days.
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Days since 1970-01-01 (negative before it).
    public var dayNumber: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public var weekday: Weekday { Weekday.of(civilDay: dayNumber) }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

extension TimeZone {
    /// The instant the wall clock of this zone shows `wall` seconds since 1970-01-01 00:00 local time. A time the
    /// clocks skip (02:30 on the night they go forward) happens at the moment of the change, the first moment after
    /// the gap; a time that happens twice (02:30 on the night they go back) happens the first time.
    func instant(wallSeconds wall: Int) -> Date {
        let offsets = Set([-86_400, 0, 86_400].map { secondsFromGMT(for: Date(timeIntervalSince1970: Double(wall + $0))) })
        let candidates = offsets.map { wall - $0 }.filter { utc in
            secondsFromGMT(for: Date(timeIntervalSince1970: Double(utc))) == wall - utc
        }
        if let first = candidates.min() { return Date(timeIntervalSince1970: Double(first)) }
        // The clocks jumped over this time: it happens at the jump.
        let before = Date(timeIntervalSince1970: Double(offsets.map { wall - $0 }.min()!))
        return nextDaylightSavingTimeTransition(after: before) ?? before
    }

    /// The local calendar day `date` falls on in this zone, as days since 1970-01-01.
    func civilDay(of date: Date) -> Int {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + secondsFromGMT(for: date)
        return seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }
}
