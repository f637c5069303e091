import Yams

/// Every kioskd YAML text composed into a tree whose tags are final: the parser runs with Yams' resolver that has no
/// rules, and each plain scalar is then given its tag here, by the same YAML 1.1 rules as Yams' default resolver
/// (bool, int, float, merge, null, timestamp, value, else str), matched by hand. Yams matches them with
/// `NSRegularExpression`, which brings ICU's regular expression engine and Unicode property tables into the
/// process: about 1 MB of resident memory at startup for the few dozen scalars of a scene (docs/design.md,
/// "The process"). Quoted and block scalars are strings, as in YAML; an explicit tag (`!!str 12`) is kept.
///
/// Before anything is composed, the text is read event by event (`YAMLEventScan`) with its work bounded as the
/// events arrive: a document whose aliases expand it beyond `maximumNodes` nodes (the "billion laughs"), that nests
/// deeper than its limits, or whose mapping keys are aliases or collections is refused at the place it crosses the
/// bound, instead of taking the process's time and memory.
public enum YAMLTree {
    /// A document refused before it was composed: what bound it crossed, and where (1-based line and column).
    public struct Refused: Error, CustomStringConvertible, Equatable {
        public var message: String
        public var line: Int
        public var column: Int
        public var description: String { message }
    }

    /// An alias-free document of `bytes` bytes holds at most half as many nodes (a node takes at least two bytes), so
    /// aliases may add about as many again as the text itself holds, and a small document 10,000: enough to reuse a
    /// style block many times, and never a tree that takes far more time or memory to build than its text to read.
    public static func nodeLimit(forBytes bytes: Int) -> Int { 10_000 + bytes }

    /// Collections inside each other, block and flow: deeper than any scene (widgets nest at most 32 levels, two
    /// YAML levels each) and shallow enough for the composer, which recurses once per level. (libyaml's scanner
    /// stops runs of flow openers beyond 1,000 before any event; `FlowDepthScan` names tighter flow bounds for files.)
    public static let defaultMaximumDepth = 128

    /// The tree of `text`, nil for an empty document. Throws `Refused` beyond a bound, `YamlError` for YAML syntax.
    public static func compose(_ text: String, maximumNodes: Int, maximumDepth: Int = defaultMaximumDepth) throws -> Node? {
        let limits = YAMLEventScan.Limits(maximumNodes: maximumNodes, maximumDepth: maximumDepth)
        if let refusal = YAMLEventScan.refusal(in: text, limits: limits) {
            throw Refused(message: refusal.message, line: refusal.line, column: refusal.column)
        }
        // The encoding named, not `.default`: that reads the environment through Foundation's ProcessInfo.
        guard let root = try Yams.compose(yaml: text, .basic, .default, .utf8) else { return nil }
        return Builder().rebuild(root)
    }

    /// The tag YAML 1.1 gives a plain (unquoted, untagged) scalar, as Yams' default resolver would.
    public static func tag(ofPlain text: String) -> Tag.Name {
        var s = Substring(text)
        // The default rules end in `$`, which also matches before one final line terminator.
        if let last = s.last, ["\n", "\u{0B}", "\u{0C}", "\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}"].contains(last) {
            s = s.dropLast()
        }
        let b = Array(s.utf8)
        if isBool(s) { return .bool }
        if isInt(b) { return .int }
        if isFloat(b) { return .float }
        if s == "<<" { return .merge }
        if s.isEmpty || s == "~" || s == "null" || s == "Null" || s == "NULL" { return .null }
        if isTimestamp(b) { return .timestamp }
        if s == "=" { return .value }
        return .str
    }

    // MARK: Values

    /// A scalar's number as Yams' `Node.float` gives it (`.inf`, `.nan`, underscores, base 60), for plain scalars.
    /// Here rather than Yams' constructors: theirs remove underscores with Foundation's `replacingOccurrences`,
    /// which runs CoreFoundation's string search and ICU at startup (docs/design.md, "The process").
    public static func double(_ node: Node) -> Double? {
        guard let scalar = node.scalar, scalar.style == .any || scalar.style == .plain else { return nil }
        switch scalar.string.lowercased() {
        case ".inf", "+.inf": return .infinity
        case "-.inf": return -.infinity
        case ".nan": return .nan
        default:
            let text = withoutUnderscores(scalar.string)
            if text.utf8.contains(UInt8(ascii: ":")) { return sexagesimal(text, Double.init) { $0 * 60 + $1 } }
            return Double(text)
        }
    }

    /// A scalar's whole number as Yams' `Node.int` gives it (sign, 0x, 0b, 0o and leading-0 octal, underscores,
    /// base 60), for plain scalars.
    public static func int(_ node: Node) -> Int? {
        guard let scalar = node.scalar, scalar.style == .any || scalar.style == .plain else { return nil }
        let withSign = withoutUnderscores(scalar.string)
        if withSign == "0" { return 0 }
        let negative = withSign.hasPrefix("-")
        let hasSign = negative || withSign.hasPrefix("+")
        let digits = withSign.dropFirst(hasSign ? 1 : 0)
        for (prefix, radix) in [("0x", 16), ("0b", 2), ("0o", 8), ("0", 8)] where digits.hasPrefix(prefix) {
            return Int((negative ? "-" : "") + digits.dropFirst(prefix.count), radix: radix)
        }
        if digits.utf8.contains(UInt8(ascii: ":")) {
            // Beyond Int's range is no number, where Yams' arithmetic would trap.
            return sexagesimal(withSign, { Int($0, radix: 10) }) { value, digit in
                let (times, o1) = value.multipliedReportingOverflow(by: 60)
                let (sum, o2) = times.addingReportingOverflow(digit)
                return o1 || o2 ? nil : sum
            }
        }
        return Int(withSign)
    }

    /// A scalar's truth value as Yams' `Node.bool` gives it: nil for a string-tagged scalar.
    public static func bool(_ node: Node) -> Bool? {
        guard let scalar = node.scalar else { return nil }
        return bool(scalar)
    }

    public static func bool(_ scalar: Node.Scalar) -> Bool? {
        if scalar.tag.rawValue == Tag.Name.str.rawValue { return nil }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: return nil
        }
    }

    private static func withoutUnderscores(_ text: String) -> String {
        text.utf8.contains(UInt8(ascii: "_")) ? String(text.unicodeScalars.filter { $0 != "_" }) : text
    }

    /// `[-+]?a:b:c` in base 60: each part read by `part`, each step `next(value, part)` (value × 60 + part); nil
    /// when any part is not an unsigned number.
    private static func sexagesimal<T: SignedNumeric>(_ text: String, _ part: (String) -> T?, _ next: (T, T) -> T?) -> T? {
        var rest = Substring(text)
        let negative = rest.hasPrefix("-")
        if negative || rest.hasPrefix("+") { rest = rest.dropFirst() }
        var value: T = 0
        for component in rest.split(separator: ":", omittingEmptySubsequences: false) {
            // Parts are unsigned, as YAML's base-60 forms are; only the whole number has a sign.
            guard component.first.map({ $0 != "-" && $0 != "+" }) ?? false, let digit = part(String(component)),
                  let v = next(value, digit) else { return nil }
            value = v
        }
        return negative ? -value : value
    }

    /// Gives each node its final tag; the scan bounded the tree's size before it was composed.
    private struct Builder {
        let tags: [Tag.Name: Tag]

        init() {
            // One tag object per name; `.basic` and `.default` are named so that Yams' regex resolver is never built.
            var tags: [Tag.Name: Tag] = [:]
            for name in [Tag.Name.str, .int, .float, .bool, .null, .merge, .timestamp, .value, .map, .seq] {
                tags[name] = Tag(name, .basic, .default)
            }
            self.tags = tags
        }

        func tag(_ name: Tag.Name) -> Tag { tags[name] ?? Tag(name, .basic, .default) }

        func rebuild(_ node: Node) -> Node {
            switch node {
            case .scalar(let s):
                let raw = s.tag.rawValue
                let name: Tag.Name = raw.isEmpty ? YAMLTree.tag(ofPlain: s.string)
                    : raw == Tag.Name.nonSpecific.rawValue ? .str : Tag.Name(rawValue: raw)
                return .scalar(Node.Scalar(s.string, tag(name), s.style, s.mark, s.anchor))
            case .mapping(let m):
                var pairs: [(Node, Node)] = []
                pairs.reserveCapacity(m.count)
                for (key, value) in m { pairs.append((rebuild(key), rebuild(value))) }
                return .mapping(Node.Mapping(pairs, tag(collection(m.tag.rawValue, .map)), m.style, m.mark, m.anchor))
            case .sequence(let q):
                var nodes: [Node] = []
                nodes.reserveCapacity(q.count)
                for item in q { nodes.append(rebuild(item)) }
                return .sequence(Node.Sequence(nodes, tag(collection(q.tag.rawValue, .seq)), q.style, q.mark, q.anchor))
            case .alias:
                return node
            }
        }

        private func collection(_ raw: String, _ implied: Tag.Name) -> Tag.Name {
            raw.isEmpty || raw == Tag.Name.nonSpecific.rawValue ? implied : Tag.Name(rawValue: raw)
        }
    }

    // MARK: The rules, matched by hand

    private static func isBool(_ s: Substring) -> Bool {
        switch s {
        case "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
             "on", "On", "ON", "off", "Off", "OFF": return true
        default: return false
        }
    }

    private static func digit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    private static let underscore = UInt8(ascii: "_")

    /// Index after an optional sign.
    private static func afterSign(_ b: [UInt8]) -> Int {
        b.first == UInt8(ascii: "-") || b.first == UInt8(ascii: "+") ? 1 : 0
    }

    /// `(?::[0-5]?[0-9])+` from `i`: the index after the last group, or nil when there is none.
    private static func sexagesimalGroups(_ b: [UInt8], from start: Int) -> Int? {
        var i = start
        var groups = 0
        while i < b.count, b[i] == UInt8(ascii: ":") {
            var j = i + 1
            // [0-5]?[0-9]: one digit, or two with the first 0 to 5.
            guard j < b.count, digit(b[j]) else { break }
            if j + 1 < b.count, digit(b[j + 1]), b[j] <= UInt8(ascii: "5") { j += 2 } else { j += 1 }
            i = j
            groups += 1
        }
        return groups > 0 ? i : nil
    }

    private static func all(_ b: [UInt8], from i: Int, _ allowed: (UInt8) -> Bool) -> Bool {
        i < b.count && b[i...].allSatisfy(allowed)
    }

    static func isInt(_ b: [UInt8]) -> Bool {
        let i = afterSign(b)
        let rest = b.count - i
        guard rest > 0 else { return false }
        if rest > 2, b[i] == UInt8(ascii: "0"), b[i + 1] == UInt8(ascii: "b") {
            if all(b, from: i + 2, { $0 == 0x30 || $0 == 0x31 || $0 == underscore }) { return true }
        }
        if rest > 2, b[i] == UInt8(ascii: "0"), b[i + 1] == UInt8(ascii: "x") {
            if all(b, from: i + 2, { digit($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) || $0 == underscore }) {
                return true
            }
        }
        // 0o?[0-7_]+
        if b[i] == UInt8(ascii: "0") {
            let j = i + 1 < b.count && b[i + 1] == UInt8(ascii: "o") ? i + 2 : i + 1
            if all(b, from: j, { (0x30...0x37).contains($0) || $0 == underscore }) { return true }
            if j == i + 2, all(b, from: i + 1, { (0x30...0x37).contains($0) || $0 == underscore }) { return true }
        }
        // 0 | [1-9][0-9_]*
        if rest == 1, b[i] == UInt8(ascii: "0") { return true }
        if b[i] >= UInt8(ascii: "1"), b[i] <= UInt8(ascii: "9") {
            var j = i + 1
            while j < b.count, digit(b[j]) || b[j] == underscore { j += 1 }
            if j == b.count { return true }
            // [1-9][0-9_]*(?::[0-5]?[0-9])+
            if let end = sexagesimalGroups(b, from: j), end == b.count { return true }
        }
        return false
    }

    static func isFloat(_ b: [UInt8]) -> Bool {
        let i = afterSign(b)
        // [-+]?\.(?:inf|Inf|INF)
        let tail = b[i...]
        if tail.elementsEqual(".inf".utf8) || tail.elementsEqual(".Inf".utf8) || tail.elementsEqual(".INF".utf8) { return true }
        // \.(?:nan|NaN|NAN), unsigned
        if b.elementsEqual(".nan".utf8) || b.elementsEqual(".NaN".utf8) || b.elementsEqual(".NAN".utf8) { return true }
        // \.[0-9_]+(?:[eE][-+][0-9]+)?, unsigned
        if b.first == UInt8(ascii: ".") {
            var j = 1
            while j < b.count, digit(b[j]) || b[j] == underscore { j += 1 }
            if j > 1, exponent(b, from: j, signRequired: true) == b.count { return true }
        }
        guard i < b.count, digit(b[i]) else { return false }
        var j = i + 1
        while j < b.count, digit(b[j]) || b[j] == underscore { j += 1 }
        // [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
        if let end = sexagesimalGroups(b, from: j), end < b.count, b[end] == UInt8(ascii: ".") {
            if b[(end + 1)...].allSatisfy({ digit($0) || $0 == underscore }) { return true }
        }
        // [-+]?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
        if j < b.count, b[j] == UInt8(ascii: ".") {
            j += 1
            while j < b.count, digit(b[j]) || b[j] == underscore { j += 1 }
        }
        return exponent(b, from: j, signRequired: false) == b.count
    }

    /// The index after an optional `[eE][-+]?[0-9]+` at `i` (sign required when asked); `i` when there is none.
    private static func exponent(_ b: [UInt8], from i: Int, signRequired: Bool) -> Int {
        guard i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") else { return i }
        var j = i + 1
        if j < b.count, b[j] == UInt8(ascii: "-") || b[j] == UInt8(ascii: "+") { j += 1 } else if signRequired { return i }
        let digits = j
        while j < b.count, digit(b[j]) { j += 1 }
        return j > digits ? j : i
    }

    static func isTimestamp(_ b: [UInt8]) -> Bool {
        var i = 0
        func digits(_ min: Int, _ max: Int) -> Bool {
            var n = 0
            while n < max, i < b.count, digit(b[i]) { i += 1; n += 1 }
            return n >= min
        }
        func take(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        // [0-9]{4}-[0-9]{2}-[0-9]{2}
        if b.count == 10, digits(4, 4), take("-"), digits(2, 2), take("-"), digits(2, 2), i == b.count { return true }
        i = 0
        guard digits(4, 4), take("-"), digits(1, 2), take("-"), digits(1, 2) else { return false }
        // (?:[Tt]|[ \t]+)
        if take("T") || take("t") {
        } else {
            guard i < b.count, b[i] == 0x20 || b[i] == 0x09 else { return false }
            while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
        }
        guard digits(1, 2), take(":"), digits(2, 2), take(":"), digits(2, 2) else { return false }
        if take(".") { while i < b.count, digit(b[i]) { i += 1 } }
        if i == b.count { return true }
        // (?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?
        while i < b.count, b[i] == 0x20 || b[i] == 0x09 { i += 1 }
        if take("Z") { return i == b.count }
        guard take("-") || take("+"), digits(1, 2) else { return false }
        if i == b.count { return true }
        guard take(":"), digits(2, 2) else { return false }
        return i == b.count
    }
}
