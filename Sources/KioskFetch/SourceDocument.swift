import Foundation
import KioskCore
import KioskScene

/// A data source's response read into data key values: JSON (whole, or the value at a JSONPath), or an RSS 2.0 /
/// Atom feed. Runs on the fetcher's worker, on a body already bounded by the fetch's size limit; each reader is
/// linear in the body's size (JSON's nesting is bounded by Foundation's reader, the feed reader expands no
/// entities but the five predefined and numeric ones). Pure functions; any thread.
public enum SourceDocument {
    /// The values `source` sets from `body`, or why it sets none.
    public static func values(for source: HTTPDataSource, body: [UInt8], contentType: String?) -> Result<[String: String], FetchFailure> {
        switch source.kind {
        case .http(let path):
            return jsonValue(body, path: path, contentType: contentType).map { [source.key: $0] }
        case .rss(let items, let summaries):
            return feed(body, limit: items, contentType: contentType).map { entries in
                var values = [source.key: entries.map(\.title).joined(separator: " • "), "\(source.key).count": String(entries.count)]
                for (i, entry) in entries.enumerated() {
                    values["\(source.key).\(i).title"] = entry.title
                    if summaries { values["\(source.key).\(i).summary"] = entry.summary }
                }
                return values
            }
        }
    }

    private static func typeNote(_ contentType: String?) -> String {
        contentType.map { " (Content-Type \($0))" } ?? ""
    }

    /// The body as text without `path`; with it, the JSON value there: strings as they are, numbers and booleans
    /// as JSON writes them, null as "", arrays and objects as compact JSON.
    public static func jsonValue(_ body: [UInt8], path: JSONPath?, contentType: String?) -> Result<String, FetchFailure> {
        guard let path else {
            guard let text = String(validating: body, as: UTF8.self) else {
                return .failure(.refused("the response is not UTF-8 text\(typeNote(contentType))"))
            }
            return .success(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
        } catch {
            let first = String(decoding: body.prefix(40), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
            return .failure(.refused("the response is not JSON\(typeNote(contentType)): it begins '\(first)'"))
        }
        var node = root
        var at = "$"
        for step in path.steps {
            switch step {
            case .member(let name):
                guard let object = node as? [String: Any] else {
                    return .failure(.refused("\(at) is \(kind(node)), not an object with '\(name)' (json: \(path))"))
                }
                guard let next = object[name] else {
                    let near = Suggestion.nearest(to: name, in: Array(object.keys)).map { "; did you mean '\($0)'?" } ?? ""
                    return .failure(.refused("\(at) has no member '\(name)'\(near) (json: \(path))"))
                }
                node = next
                at += ".\(name)"
            case .index(let index):
                guard let array = node as? [Any] else {
                    return .failure(.refused("\(at) is \(kind(node)), not an array (json: \(path))"))
                }
                guard index < array.count else {
                    return .failure(.refused("\(at) has \(array.count) item\(array.count == 1 ? "" : "s"); [\(index)] is past the end (json: \(path))"))
                }
                node = array[index]
                at += "[\(index)]"
            }
        }
        return .success(text(of: node))
    }

    private static func kind(_ node: Any) -> String {
        switch node {
        case is [String: Any]: "an object"
        case is [Any]: "an array"
        case is String: "a string"
        case is NSNull: "null"
        case let n as NSNumber where isBoolean(n): "a boolean"
        case is NSNumber: "a number"
        default: "a value"
        }
    }

    /// JSON's true and false come as NSNumbers whose type is C's char (a 1 is also `is Bool` when bridged).
    private static func isBoolean(_ n: NSNumber) -> Bool { String(cString: n.objCType) == "c" }

    private static func text(of node: Any) -> String {
        switch node {
        case let s as String: return s
        case is NSNull: return ""
        case let n as NSNumber:
            if isBoolean(n) { return n.boolValue ? "true" : "false" }
            let d = n.doubleValue
            if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
            return String(d)
        default:
            let data = (try? JSONSerialization.data(withJSONObject: node, options: [.sortedKeys, .fragmentsAllowed])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// One entry of a feed.
    public struct FeedEntry: Sendable, Equatable {
        public var title: String
        public var summary: String
    }

    /// The first `limit` entries of an RSS 2.0 (`<item>`, `<title>`, `<description>`), RSS 1.0 or Atom (`<entry>`,
    /// `<title>`, `<summary>` or `<content>`) feed; markup in a summary removed, white space collapsed.
    public static func feed(_ body: [UInt8], limit: Int, contentType: String?) -> Result<[FeedEntry], FetchFailure> {
        guard let text = String(validating: body, as: UTF8.self) else {
            return .failure(.refused("the feed is not UTF-8\(typeNote(contentType))"))
        }
        var scanner = XMLScanner(Array(text.unicodeScalars))
        var stack: [String] = []
        var isFeed = false
        var entries: [FeedEntry] = []
        var current: (title: String, summary: String, hasSummary: Bool)?
        var field: String?
        var fieldDepth = 0
        var fieldText = ""
        while let token = scanner.next() {
            switch token {
            case .failure(let message):
                return .failure(.refused("the feed is not well-formed XML: \(message) at character \(scanner.position)\(typeNote(contentType))"))
            case .open(let name, let selfClosing):
                let local = name.split(separator: ":").last.map(String.init) ?? name
                if stack.isEmpty { isFeed = ["rss", "feed", "RDF"].contains(local) }
                guard isFeed else {
                    return .failure(.refused("the response is not an RSS or Atom feed: its root element is <\(name)>\(typeNote(contentType))"))
                }
                if selfClosing { continue }
                stack.append(local)
                if local == "item" || local == "entry" {
                    current = ("", "", false)
                } else if current != nil, field == nil, stack.count >= 2, ["item", "entry"].contains(stack[stack.count - 2]) {
                    if local == "title" || (["description", "summary", "content"].contains(local) && !(current?.hasSummary ?? true)) {
                        field = local
                        fieldDepth = stack.count
                        fieldText = ""
                    }
                }
            case .close:
                if let f = field, stack.count == fieldDepth {
                    if f == "title" { current?.title = collapse(fieldText) } else {
                        current?.summary = collapse(stripTags(fieldText))
                        current?.hasSummary = true
                    }
                    field = nil
                }
                if let last = stack.popLast(), last == "item" || last == "entry", let entry = current {
                    entries.append(FeedEntry(title: entry.title, summary: entry.summary))
                    current = nil
                    if entries.count >= limit { return .success(entries) }
                }
            case .text(let t):
                if field != nil { fieldText += t }
            }
        }
        guard isFeed else { return .failure(.refused("the response is not an RSS or Atom feed\(typeNote(contentType))")) }
        return .success(entries)
    }

    private static func collapse(_ s: String) -> String {
        s.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    private static func stripTags(_ s: String) -> String {
        var out = ""
        var inTag = false
        for c in s {
            if c == "<" { inTag = true } else if c == ">" && inTag { inTag = false; out.append(" ") } else if !inTag { out.append(c) }
        }
        return out
    }
}

/// A forward-only XML tokenizer for feeds: elements, text (entities decoded, CDATA as it is); comments,
/// processing instructions and the DOCTYPE skipped. No entity is defined or expanded but the predefined and
/// numeric ones, so a billion-laughs document is plain text. Not a validating parser.
struct XMLScanner {
    enum Token {
        case open(String, selfClosing: Bool)
        case close(String)
        case text(String)
        case failure(String)
    }

    private let s: [Unicode.Scalar]
    private(set) var position = 0
    private var failed = false

    init(_ s: [Unicode.Scalar]) { self.s = s }

    private func starts(_ prefix: String, at i: Int) -> Bool {
        var j = i
        for p in prefix.unicodeScalars {
            guard j < s.count, s[j] == p else { return false }
            j += 1
        }
        return true
    }

    private func find(_ needle: String, from i: Int) -> Int? {
        var j = i
        while j < s.count {
            if s[j] == needle.unicodeScalars.first!, starts(needle, at: j) { return j }
            j += 1
        }
        return nil
    }

    mutating func next() -> Token? {
        while true {
            guard !failed, position < s.count else { return nil }
            if let token = step() { return token }
        }
    }

    /// One token, or nil after skipping a comment, processing instruction or declaration.
    private mutating func step() -> Token? {
        if s[position] != "<" {
            let start = position
            while position < s.count, s[position] != "<" { position += 1 }
            return .text(Self.decode(String(String.UnicodeScalarView(s[start..<position]))))
        }
        if starts("<![CDATA[", at: position) {
            guard let end = find("]]>", from: position + 9) else { return fail("a CDATA section is not closed") }
            let text = String(String.UnicodeScalarView(s[(position + 9)..<end]))
            position = end + 3
            return .text(text)
        }
        if starts("<!--", at: position) {
            guard let end = find("-->", from: position + 4) else { return fail("a comment is not closed") }
            position = end + 3
            return nil
        }
        if starts("<?", at: position) {
            guard let end = find("?>", from: position + 2) else { return fail("a processing instruction is not closed") }
            position = end + 2
            return nil
        }
        if starts("<!", at: position) {
            // <!DOCTYPE ...>, with an internal subset in [ ] skipped whole.
            var depth = 0
            var i = position + 2
            while i < s.count {
                if s[i] == "[" { depth += 1 } else if s[i] == "]" { depth -= 1 } else if s[i] == ">" && depth <= 0 { break }
                i += 1
            }
            guard i < s.count else { return fail("a declaration is not closed") }
            position = i + 1
            return nil
        }
        // A tag; quoted attribute values may hold '>'.
        var i = position + 1
        var quote: Unicode.Scalar?
        while i < s.count {
            let c = s[i]
            if let q = quote { if c == q { quote = nil } } else if c == "\"" || c == "'" { quote = c } else if c == ">" { break }
            i += 1
        }
        guard i < s.count else { return fail("a tag is not closed") }
        let inner = String(String.UnicodeScalarView(s[(position + 1)..<i]))
        position = i + 1
        if inner.hasPrefix("/") {
            return .close(String(inner.dropFirst()).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let selfClosing = inner.hasSuffix("/")
        let name = inner.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "/" }).first.map(String.init) ?? ""
        guard !name.isEmpty else { return fail("a tag has no name") }
        return .open(name, selfClosing: selfClosing)
    }

    private mutating func fail(_ message: String) -> Token {
        failed = true
        return .failure(message)
    }

    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            rest = rest[amp...]
            guard let semi = rest.prefix(12).firstIndex(of: ";") else { out.append("&"); rest = rest.dropFirst(); continue }
            let name = rest[rest.index(after: rest.startIndex)..<semi]
            var replacement: String?
            switch name {
            case "amp": replacement = "&"
            case "lt": replacement = "<"
            case "gt": replacement = ">"
            case "quot": replacement = "\""
            case "apos": replacement = "'"
            default:
                if name.hasPrefix("#x") || name.hasPrefix("#X"), let v = UInt32(name.dropFirst(2), radix: 16), let u = Unicode.Scalar(v) {
                    replacement = String(Character(u))
                } else if name.hasPrefix("#"), let v = UInt32(name.dropFirst()), let u = Unicode.Scalar(v) {
                    replacement = String(Character(u))
                }
            }
            if let replacement {
                out += replacement
                rest = rest[rest.index(after: semi)...]
            } else {
                out.append("&")
                rest = rest.dropFirst()
            }
        }
        return out + rest
    }
}
