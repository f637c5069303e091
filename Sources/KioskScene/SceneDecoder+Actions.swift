import KioskCore
import Yams

/// `on_press`: one action per widget, checked where it stands; page names are checked once every page is known.
extension SceneDecoder {
    static let pressActionKeys = ["page", "transition", "data", "emit"]

    func pressAction(_ node: Node, _ path: String) -> PressAction? {
        let expected = "an action: {page: NAME, transition: ...}, {data: {key: value}} or {emit: NAME}"
        guard let f = fields(node, path, allowed: Self.pressActionKeys, expected: expected) else { return nil }
        let given = ["page", "data", "emit"].filter { f[$0] != nil }
        guard given.count == 1 else {
            // Unknown keys alone were reported already, with the nearest known one.
            if given.isEmpty, !f.isEmpty || node.mapping?.isEmpty == false { return nil }
            error(node, path, given.isEmpty ? "expected \(expected)" : "give one of 'page', 'data' or 'emit', not \(given.map { "'\($0)'" }.joined(separator: " and "))")
            return nil
        }
        if let t = f["transition"], given[0] != "page" {
            error(t.key, Self.child(path, "transition"), "'transition' goes with 'page'")
            return nil
        }
        switch given[0] {
        case "page":
            let p = f["page"]!
            guard let name = string(p.value, Self.child(path, "page")) else { return nil }
            var transition: Transition?
            if let t = f["transition"] {
                guard let parsed = self.transition(t.value, Self.child(path, "transition")) else { return nil }
                transition = parsed
            }
            pageReferences.append((name, p.value, Self.child(path, "page")))
            return .showPage(name: name, transition: transition)
        case "data":
            let dataPath = Self.child(path, "data")
            guard let d = fields(f["data"]!.value, dataPath, allowed: [], expected: "a mapping of binding keys to values", any: true) else { return nil }
            var values: [String: String] = [:]
            var valid = true
            for (key, entry) in d {
                let p = Self.child(dataPath, key)
                guard Template.isValidKey(key) else { error(entry.key, p, "'\(key)' is not a binding key"); valid = false; continue }
                guard let scalar = entry.value.scalar else { error(entry.value, p, "expected a string or number"); valid = false; continue }
                values[key] = scalar.string
            }
            if values.isEmpty && valid { error(f["data"]!.value, dataPath, "expected at least one key to set") }
            return valid && !values.isEmpty ? .setData(values) : nil
        default:
            guard let name = string(f["emit"]!.value, Self.child(path, "emit")) else { return nil }
            guard !name.isEmpty else { error(f["emit"]!.value, Self.child(path, "emit"), "the emitted name is empty"); return nil }
            return .emit(name)
        }
    }

    /// Every `on_press: {page: NAME}` names a page of the scene.
    func checkPageReferences(_ pages: [Page]) {
        let names = pages.map(\.name)
        for reference in pageReferences where !names.contains(reference.name) {
            let hint = Suggestion.nearest(to: reference.name, in: names).map { "; did you mean '\($0)'?" } ?? "; pages: \(names.joined(separator: ", "))"
            error(reference.node, reference.path, "no page named '\(reference.name)'\(hint)")
        }
    }
}
