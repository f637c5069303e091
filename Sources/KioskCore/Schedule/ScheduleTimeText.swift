import Foundation

/// Instants as an operator writes them for a schedule preview, and as the preview prints them. A date
/// (`2026-11-28`, its midnight) or a date and time (`2026-11-28T06:30`, `2026-11-28 06:30:15`) is wall-clock
/// time in the schedule's zone; a trailing `Z` or `+01:00` makes it an absolute instant. Printed as
/// `2026-11-28 06:30:00 +0100 Sat` in the zone. A namespace of pure functions; any thread.
public enum ScheduleTimeText {
    public static let accepted = "YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (in the scene's time zone), or either with Z or ±HH:MM"

    /// The instant `text` names in `zone`; nil when it is not one of the accepted forms.
    public static func parse(_ text: String, in zone: TimeZone) -> Date? {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        var offset: Int?
        if body.hasSuffix("Z") {
            offset = 0
            body = body.dropLast()
        } else if body.count > 16, let sign = body.dropLast(5).last, sign == "+" || sign == "-" {
            let tail = body.suffix(5)
            let parts = tail.split(separator: ":")
            guard parts.count == 2, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isNumber) }),
                  let h = Int(parts[0]), let m = Int(parts[1]), h <= 23, m <= 59 else { return nil }
            offset = (sign == "+" ? 1 : -1) * (h * 3600 + m * 60)
            body = body.dropLast(6)
        }
        let dateText = body.prefix(10)
        guard let date = CivilDate(parsing: String(dateText)) else { return nil }
        var seconds = 0
        if body.count > 10 {
            let separator = body[body.index(body.startIndex, offsetBy: 10)]
            guard separator == "T" || separator == " " else { return nil }
            let parts = body.dropFirst(11).split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count), parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isNumber) }),
                  let h = Int(parts[0]), let m = Int(parts[1]), h <= 23, m <= 59 else { return nil }
            let s = parts.count == 3 ? Int(parts[2]) ?? 60 : 0
            guard s <= 59 else { return nil }
            seconds = h * 3600 + m * 60 + s
        }
        let wall = date.dayNumber * 86_400 + seconds
        if let offset { return Date(timeIntervalSince1970: Double(wall - offset)) }
        return zone.instant(wallSeconds: wall)
    }

    /// `2026-11-28 06:30:00 +0100 Sat`: the wall clock of `zone` at `date`, its offset and weekday.
    public static func format(_ date: Date, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        let wall = Int(date.timeIntervalSince1970.rounded(.down)) + offset
        let day = wall >= 0 ? wall / 86_400 : (wall - 86_399) / 86_400
        let civil = CivilDate(dayNumber: day)
        let s = wall - day * 86_400
        let sign = offset < 0 ? "-" : "+"
        return String(format: "%@ %02d:%02d:%02d %@%02d%02d %@", civil.description, s / 3600, s / 60 % 60, s % 60, sign,
                      abs(offset) / 3600, abs(offset) / 60 % 60, Weekday.of(civilDay: day).rawValue.capitalized)
    }
}
