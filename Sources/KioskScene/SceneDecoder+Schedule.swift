import Foundation
import KioskCore
import Yams

/// Dayparting: pages' `when:` rules and `priority:`, the scene's `timezone:`, `fallback:` and `unsynchronized:`
/// (see `PageSchedule`).
extension SceneDecoder {
    static let scheduleSceneKeys = ["timezone", "fallback", "unsynchronized"]
    static let schedulePageKeys = ["when", "priority"]
    static let ruleKeys = ["days", "dates", "from", "to"]
    static let ruleExample = "{days: [mon, tue], dates: [\"2026-12-24\", \"2026-12-27..2027-01-02\"], from: \"07:00\", to: \"11:00\"}"

    /// A page's `when:` and `priority:`.
    func schedule(of page: inout Page, _ f: [String: (key: Node, value: Node)], _ path: String) {
        if let entry = f["when"] {
            page.rules = rules(entry.value, Self.child(path, "when"), what: "the page") ?? []
        }
        if let entry = f["priority"], let priority = integer(entry.value, Self.child(path, "priority"), in: -1000...1000) {
            page.priority = priority
        }
    }

    /// A `when:` value: one rule or a list of them; nil when it is not valid (the errors are recorded). `what`
    /// names what the rules are for, in the error for an empty list.
    func rules(_ node: Node, _ whenPath: String, what: String) -> [DaypartRule]? {
        if node.mapping != nil {
            return daypartRule(node, whenPath).map { [$0] }
        } else if let list = node.sequence {
            if list.isEmpty {
                error(node, whenPath, "give at least one rule \(Self.ruleExample), or leave 'when' out to show \(what) at any time")
                return nil
            }
            let rules = list.enumerated().compactMap { daypartRule($0.element, "\(whenPath)[\($0.offset)]") }
            return rules.count == list.count ? rules : nil
        } else {
            error(node, whenPath, "expected a rule \(Self.ruleExample) or a list of them")
            return nil
        }
    }

    /// The scene's `timezone:`, `fallback:` and `unsynchronized:`, once its pages are known.
    func sceneSchedule(of scene: inout Scene, _ f: [String: (key: Node, value: Node)]) {
        if let entry = f["timezone"], let zone = string(entry.value, "timezone") {
            if TimeZone(identifier: zone) == nil {
                // Compared without case: `europe/paris` is a near miss too.
                let known = TimeZone.knownTimeZoneIdentifiers
                let byLowercase = Dictionary(known.map { ($0.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
                let hint = Suggestion.nearest(to: zone.lowercased(), in: Array(byLowercase.keys)).flatMap { byLowercase[$0] }
                    .map { "did you mean '\($0)'? " } ?? ""
                error(entry.value, "timezone", "unknown time zone '\(zone)'; \(hint)expected an IANA name such as Europe/Paris")
            } else {
                scene.timeZone = zone
            }
        }
        if let entry = f["fallback"], let name = string(entry.value, "fallback") {
            let names = scene.pages.map(\.name)
            if let page = scene.pages.first(where: { $0.name == name }) {
                if !page.rules.isEmpty {
                    error(entry.value, "fallback", "page '\(name)' has 'when' rules (at \(page.location)), but the fallback is shown exactly when no rule holds; remove its rules")
                } else {
                    scene.fallback = name
                }
            } else {
                let hint = Suggestion.nearest(to: name, in: names).map { "; did you mean '\($0)'?" } ?? "; pages: \(names.joined(separator: ", "))"
                error(entry.value, "fallback", "no page named '\(name)'\(hint)")
            }
        }
        if let entry = f["unsynchronized"], let choice = choice(entry.value, "unsynchronized", PageSchedule.Unsynchronized.self) {
            scene.unsynchronized = choice
        }
        // Every page has rules and nothing is said for the times none holds: a gap in the rules shows a page out of its window.
        if f["fallback"] == nil, let first = scene.pages.first, scene.pages.allSatisfy({ !$0.rules.isEmpty }) {
            report(.warning, first.location, "fallback",
                   "every page has 'when' rules and there is no fallback page: when no rule holds, the page on screen stays")
        }
    }

    func daypartRule(_ node: Node, _ path: String) -> DaypartRule? {
        guard let f = fields(node, path, allowed: Self.ruleKeys, expected: "a rule \(Self.ruleExample)") else { return nil }
        guard node.mapping?.isEmpty == false else {
            error(node, path, "an empty rule; give 'days', 'dates', 'from' or 'to'")
            return nil
        }
        var valid = true
        var rule = DaypartRule()
        if let entry = f["days"] {
            if let days = weekdays(entry.value, Self.child(path, "days")) { rule.days = days } else { valid = false }
        }
        if let entry = f["dates"] {
            if let dates = dateSpans(entry.value, Self.child(path, "dates")) { rule.dates = dates } else { valid = false }
        }
        for key in ["from", "to"] {
            guard let entry = f[key] else { continue }
            // Scalars only: unquoted 07:00 is a base-60 number to YAML 1.1, and its text is what is meant.
            guard let text = entry.value.scalar?.string, let time = TimeOfDay(parsing: text) else {
                error(entry.value, Self.child(path, key), "expected a time of day from 00:00 to 23:59 (\"07:00\")")
                valid = false
                continue
            }
            if key == "from" { rule.from = time } else { rule.to = time }
        }
        if let from = rule.from, let to = rule.to, from == to, let entry = f["to"] {
            error(entry.value, Self.child(path, "to"), "the same time as 'from' (\(from)): the window would be empty; leave both out for the whole day")
            valid = false
        }
        return valid ? rule : nil
    }

    /// `[mon, tue]`, or one of the shorthands `weekdays` (Monday to Friday) and `weekend`.
    func weekdays(_ node: Node, _ path: String) -> Set<Weekday>? {
        let names = Weekday.allCases.map(\.rawValue)
        if let text = node.scalar?.string {
            switch text {
            case "weekdays": return [.mon, .tue, .wed, .thu, .fri]
            case "weekend": return [.sat, .sun]
            default:
                if let day = Weekday(rawValue: text) { return [day] }
                let hint = Suggestion.nearest(to: text, in: names + ["weekdays", "weekend"]).map { "did you mean '\($0)'? " } ?? ""
                error(node, path, "'\(text)' is not a day; \(hint)expected a list of \(names.joined(separator: ", ")), or weekdays or weekend")
                return nil
            }
        }
        guard let list = node.sequence else { error(node, path, "expected a list of days (\(names.joined(separator: ", ")))"); return nil }
        guard !list.isEmpty else { error(node, path, "give at least one day (\(names.joined(separator: ", "))), or leave days out for every day"); return nil }
        let days = list.enumerated().compactMap { choice($0.element, "\(path)[\($0.offset)]", Weekday.self) }
        return days.count == list.count ? Set(days) : nil
    }

    /// A list of dates (`"2026-12-24"`) and spans (`"2026-12-24..2027-01-01"`, both days included), or one of them.
    func dateSpans(_ node: Node, _ path: String) -> [DateSpan]? {
        let items: [(Node, String)]
        if node.scalar != nil {
            items = [(node, path)]
        } else if let list = node.sequence {
            guard !list.isEmpty else { error(node, path, "give at least one date (\"2026-12-24\") or span (\"2026-12-24..2027-01-01\"), or leave dates out for any date"); return nil }
            items = list.enumerated().map { ($0.element, "\(path)[\($0.offset)]") }
        } else {
            error(node, path, "expected a list of dates (\"2026-12-24\") and spans (\"2026-12-24..2027-01-01\")")
            return nil
        }
        var spans: [DateSpan] = []
        for (item, itemPath) in items {
            guard let text = item.scalar?.string else { error(item, itemPath, "expected a date (\"2026-12-24\") or a span (\"2026-12-24..2027-01-01\")"); continue }
            let parts = text.components(separatedBy: "..")
            let dates = parts.map { CivilDate(parsing: $0.trimmingCharacters(in: .whitespaces)) }
            guard parts.count <= 2, let first = dates.first ?? nil, let last = dates.last ?? nil else {
                error(item, itemPath, "'\(text)' is not a date (YYYY-MM-DD, a day that exists) or a span of two (YYYY-MM-DD..YYYY-MM-DD)")
                continue
            }
            guard let span = DateSpan(first: first, last: last) else {
                error(item, itemPath, "the span '\(text)' ends before it starts")
                continue
            }
            spans.append(span)
        }
        return spans.count == items.count ? spans : nil
    }
}
