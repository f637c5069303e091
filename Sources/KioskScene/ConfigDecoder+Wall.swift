import Yams

extension ConfigDecoder {
    /// A `wall:` section at `at` (`wall`, or `outputs[N].wall`): `columns` and `rows` (1-16), this panel's `column`
    /// and `row` (from 0, inside the wall), `bezel: {x, y}` (pixels, or a length such as `6.5mm`) and `panel_mm:
    /// {width, height}`, needed by a bezel in millimetres. Every problem is a located error.
    func wall(_ node: Node, _ at: String) -> WallSettings? {
        let keys = WallSettings.keys
        guard let f = scene.fields(node, at, allowed: keys, expected: "a mapping (\(keys.joined(separator: ", ")))") else { return nil }
        var wall = WallSettings()
        var valid = true
        func side(_ key: String) -> Int? {
            guard let entry = f[key] else { return nil }
            guard let n = scene.integer(entry.value, "\(at).\(key)", in: WallSettings.sideRange) else { valid = false; return nil }
            return n
        }
        wall.columns = side("columns") ?? 1
        wall.rows = side("rows") ?? 1
        func place(_ key: String, count: Int, of countKey: String) -> Int {
            guard let entry = f[key] else {
                if count > 1 {
                    scene.error(node, at, "missing '\(key)': which of the \(count) \(countKey) this panel is (from 0)")
                    valid = false
                }
                return 0
            }
            guard let n = scene.integer(entry.value, "\(at).\(key)", in: 0...(WallSettings.sideRange.upperBound - 1)) else { valid = false; return 0 }
            guard n < count else {
                scene.error(entry.value, "\(at).\(key)", "\(n) is outside the wall: \(countKey) \(count) are numbered 0 to \(count - 1)")
                valid = false
                return 0
            }
            return n
        }
        wall.column = place("column", count: wall.columns, of: "columns")
        wall.row = place("row", count: wall.rows, of: "rows")
        var millimetres: Node?
        if let entry = f["bezel"] {
            if let b = scene.fields(entry.value, "\(at).bezel", allowed: WallSettings.bezelKeys, expected: "a mapping (x, y)") {
                for (key, axis) in [("x", \WallSettings.bezelX), ("y", \WallSettings.bezelY)] {
                    guard let value = b[key]?.value else { continue }
                    if let length = bezelLength(value, "\(at).bezel.\(key)") {
                        wall[keyPath: axis] = length
                        if case .millimetres = length { millimetres = value }
                    } else {
                        valid = false
                    }
                }
            } else {
                valid = false
            }
        }
        if let entry = f["panel_mm"] {
            if let p = scene.fields(entry.value, "\(at).panel_mm", allowed: WallSettings.panelKeys, expected: "a mapping (width, height)") {
                let width = p["width"].flatMap { scene.number($0.value, "\(at).panel_mm.width", in: 1...100_000) }
                let height = p["height"].flatMap { scene.number($0.value, "\(at).panel_mm.height", in: 1...100_000) }
                if let width, let height {
                    wall.panelMM = (width, height)
                } else {
                    if p["width"] == nil || p["height"] == nil {
                        scene.error(entry.value, "\(at).panel_mm", "expected both width and height, in millimetres")
                    }
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let millimetres, wall.panelMM == nil, valid {
            scene.error(millimetres, at + ".bezel", "a bezel in millimetres needs the panel's picture size: set \(at).panel_mm: {width, height}")
            valid = false
        }
        return valid ? wall : nil
    }

    /// Pixels (a whole number, or `24px`) or millimetres (`6.5mm`).
    private func bezelLength(_ node: Node, _ at: String) -> WallSettings.Length? {
        let expected = "expected pixels (24 or 24px) or millimetres (6.5mm), 0 to \(Int(WallSettings.bezelRange.upperBound))"
        guard let text = node.scalar?.string.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            scene.error(node, at, expected)
            return nil
        }
        var number = Substring(text), unit = "px"
        for suffix in ["mm", "px"] where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            unit = suffix
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value.isFinite,
              WallSettings.bezelRange.contains(value) else {
            scene.error(node, at, "'\(text)': \(expected)")
            return nil
        }
        if unit == "mm" { return .millimetres(value) }
        guard value == value.rounded() else {
            scene.error(node, at, "'\(text)': pixels are whole numbers; \(expected)")
            return nil
        }
        return .pixels(Int(value))
    }
}
