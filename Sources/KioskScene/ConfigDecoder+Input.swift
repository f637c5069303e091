import KioskCore
import Yams

/// The config file's `input:` and `idle:` sections, checked where each value stands like the rest of the file.
extension ConfigDecoder {
    static let inputKeys = ["seat", "devices", "calibration", "map"]
    static let idleKeys = ["dim_after", "dim_level", "blank_after", "schedule"]
    static let scheduleKeys = ["off", "on", "days"]

    func input(_ node: Node) -> KioskConfig.Input {
        var input = KioskConfig.Input()
        if node.scalar != nil, scene.resolves(node, to: .null) { return input }
        guard let f = scene.fields(node, "input", allowed: Self.inputKeys, expected: "a mapping (\(Self.inputKeys.joined(separator: ", ")))") else {
            return input
        }
        input.seat = f["seat"].flatMap { nonEmptyText($0.value, "input.seat") }
        if let entry = f["devices"] {
            input.devices = list(entry.value, "input.devices").enumerated().compactMap { index, item in
                nonEmptyText(item, "input.devices[\(index)]").map(path)
            }
            if let seat = f["seat"], input.seat != "none" {
                scene.error(seat.key, "input.seat", "give seat or devices, not both (devices use libinput's path backend)")
            }
        }
        input.calibration = f["calibration"].flatMap { scene.inputCalibration($0.value, "input.calibration") }
        if let entry = f["map"] { input.map = scene.inputDeviceMap(entry.value, "input.map") }
        return input
    }

    func idle(_ node: Node) -> KioskConfig.Idle {
        var idle = KioskConfig.Idle()
        if node.scalar != nil, scene.resolves(node, to: .null) { return idle }
        guard let f = scene.fields(node, "idle", allowed: Self.idleKeys, expected: "a mapping (\(Self.idleKeys.joined(separator: ", ")))") else {
            return idle
        }
        func seconds(_ key: String) -> Double? {
            guard let entry = f[key], let value = scene.number(entry.value, "idle.\(key)") else { return nil }
            guard value > 0 else { scene.error(entry.value, "idle.\(key)", "must be a positive number of seconds"); return nil }
            return value
        }
        idle.dimAfter = seconds("dim_after")
        idle.blankAfter = seconds("blank_after")
        idle.dimLevel = f["dim_level"].flatMap { scene.number($0.value, "idle.dim_level", in: 0...1) }
        if let dim = idle.dimAfter, let blank = idle.blankAfter, blank <= dim, let entry = f["blank_after"] {
            scene.error(entry.value, "idle.blank_after", "\(scene.format(blank)) must come after idle.dim_after \(scene.format(dim))")
        }
        if let entry = f["schedule"] {
            idle.schedule = list(entry.value, "idle.schedule").enumerated().compactMap { index, item in
                scheduleEntry(item, "idle.schedule[\(index)]")
            }
        }
        return idle
    }

    private func scheduleEntry(_ node: Node, _ path: String) -> ScreenScheduleEntry? {
        guard let f = scene.fields(node, path, allowed: Self.scheduleKeys,
                                   expected: "a mapping {off: \"22:00\", on: \"07:00\", days: [mon, tue, ...]}") else { return nil }
        func time(_ key: String) -> TimeOfDay? {
            guard let entry = f[key] else { scene.error(node, path, "an entry needs '\(key)', a time of day (\"07:00\")"); return nil }
            // Scalars only: unquoted 22:00 is a base-60 number to YAML 1.1, and its text is what is meant.
            guard let text = entry.value.scalar?.string, let time = TimeOfDay(parsing: text) else {
                scene.error(entry.value, SceneDecoder.child(path, key), "expected a time of day from 00:00 to 23:59 (\"07:00\")")
                return nil
            }
            return time
        }
        let off = time("off"), on = time("on")
        var days = Set(Weekday.allCases)
        if let entry = f["days"] {
            let names = Weekday.allCases.map(\.rawValue)
            let items = list(entry.value, SceneDecoder.child(path, "days"))
            let parsed = items.enumerated().compactMap { index, item in
                scene.choice(item, "\(SceneDecoder.child(path, "days"))[\(index)]", Weekday.self)
            }
            if items.isEmpty, entry.value.sequence != nil {
                scene.error(entry.value, SceneDecoder.child(path, "days"), "give at least one day (\(names.joined(separator: ", "))), or leave days out for every day")
            }
            guard parsed.count == items.count, !items.isEmpty else { return nil }
            days = Set(parsed)
        }
        guard let off, let on else { return nil }
        if off == on, let entry = f["on"] {
            scene.error(entry.value, SceneDecoder.child(path, "on"), "the same time as 'off' (\(off)): the screen would never be off")
            return nil
        }
        return ScreenScheduleEntry(off: off, on: on, days: days)
    }

    /// A sequence's items; anything else is an error and gives none.
    private func list(_ node: Node, _ path: String) -> [Node] {
        guard let sequence = node.sequence else { scene.error(node, path, "expected a list"); return [] }
        return Array(sequence)
    }

    private func nonEmptyText(_ node: Node, _ path: String) -> String? {
        guard let s = scene.string(node, path) else { return nil }
        guard !s.isEmpty else { scene.error(node, path, "expected a non-empty string"); return nil }
        return s
    }
}
