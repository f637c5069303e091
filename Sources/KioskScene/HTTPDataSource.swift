import Yams

/// A data key kept up to date from the network: `{http: URL, every: 30s, key: KEY, json: "$.path[0].value",
/// headers: {...}}` sets the key to the response (or the JSON value at `json`); `{rss: URL, every: 5m, key: KEY,
/// items: 10, summaries: true}` reads an RSS 2.0 or Atom feed into `KEY` (the titles, joined with " • "),
/// `KEY.count`, and `KEY.N.title` / `KEY.N.summary` for each item from 0. Fetched by KioskFetch. An immutable
/// value; any thread.
public struct HTTPDataSource: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The body as text, or the value at a JSON path.
        case http(json: JSONPath?)
        /// A feed's first `items` entries; with `summaries`, each one's description/summary too.
        case rss(items: Int, summaries: Bool)
    }

    public var url: String
    public var key: String
    public var every: Duration
    public var headers: [String: String]
    public var kind: Kind
    public var location: SourceLocation

    public init(url: String, key: String, every: Duration = .seconds(300), headers: [String: String] = [:], kind: Kind,
                location: SourceLocation) {
        self.url = url
        self.key = key
        self.every = every
        self.headers = headers
        self.kind = kind
        self.location = location
    }

    /// How often when `every` is not given: 5 minutes.
    public static let defaultEvery: Duration = .seconds(300)
    /// `every` is at least this: a screen's data needs no more, and a server is not hammered.
    public static let minimumEvery: Duration = .seconds(1)
}

/// The JSONPath subset data sources take: `$` then any of `.name`, `['name']` (any characters, `\'` and `\\`
/// escaped) and `[index]` (from 0). An immutable value; any thread.
public struct JSONPath: Sendable, Equatable, CustomStringConvertible {
    public enum Step: Sendable, Equatable {
        case member(String)
        case index(Int)
    }

    public var steps: [Step]
    public var description: String

    /// Why a path does not parse, and at which character (from 1).
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        public var message: String
        public var column: Int
        public var description: String { "\(message) at character \(column)" }
    }

    public init(parsing text: String) throws(SyntaxError) {
        description = text
        steps = []
        let chars = Array(text)
        guard chars.first == "$" else { throw SyntaxError(message: "a path starts with '$'", column: 1) }
        var i = 1
        func isNameChar(_ c: Character) -> Bool { c == "_" || c == "-" || c.isLetter || c.isNumber }
        while i < chars.count {
            switch chars[i] {
            case ".":
                let start = i + 1
                var end = start
                while end < chars.count, isNameChar(chars[end]) { end += 1 }
                guard end > start else {
                    throw SyntaxError(message: "expected a member name after '.' (letters, digits, '_', '-'; use ['name'] for others)", column: start + 1)
                }
                steps.append(.member(String(chars[start..<end])))
                i = end
            case "[":
                i += 1
                guard i < chars.count else { throw SyntaxError(message: "'[' is not closed", column: i) }
                if chars[i] == "'" {
                    i += 1
                    var name = ""
                    while true {
                        guard i < chars.count else { throw SyntaxError(message: "the quoted name is not closed with '", column: i + 1) }
                        if chars[i] == "\\", i + 1 < chars.count { name.append(chars[i + 1]); i += 2; continue }
                        if chars[i] == "'" { break }
                        name.append(chars[i]); i += 1
                    }
                    i += 1
                    guard i < chars.count, chars[i] == "]" else { throw SyntaxError(message: "expected ']' after the quoted name", column: i + 1) }
                    steps.append(.member(name))
                    i += 1
                } else {
                    let start = i
                    while i < chars.count, chars[i].isASCII, chars[i].isNumber { i += 1 }
                    guard i > start, let index = Int(String(chars[start..<i])) else {
                        throw SyntaxError(message: "expected an index (0, 1, ...) or a quoted name ['name'] after '['", column: start + 1)
                    }
                    guard i < chars.count, chars[i] == "]" else { throw SyntaxError(message: "expected ']' after the index", column: i + 1) }
                    steps.append(.index(index))
                    i += 1
                }
            default:
                throw SyntaxError(message: "expected '.name', '[index]' or ['name'], found '\(chars[i])'", column: i + 1)
            }
        }
    }
}

extension SceneDecoder {
    static let httpSourceKeys = ["http", "key", "every", "json", "headers"]
    static let rssSourceKeys = ["rss", "key", "every", "items", "summaries"]

    /// An `http:` or `rss:` entry of `data_sources`.
    func httpDataSource(_ item: Node, _ here: String) -> HTTPDataSource? {
        let isRSS = item.mapping?.contains { $0.key.scalar?.string == "rss" } ?? false
        let kindKey = isRSS ? "rss" : "http"
        let allowed = isRSS ? Self.rssSourceKeys : Self.httpSourceKeys
        guard let f = fields(item, here, allowed: allowed, expected: "a mapping with '\(kindKey)' and 'key'") else { return nil }
        guard let urlNode = f[kindKey]?.value, let url = urlNode.scalar?.string, !url.isEmpty else {
            error(item, Self.child(here, kindKey), "expected a URL")
            return nil
        }
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > 8, !url.contains(where: { $0.isWhitespace }) else {
            error(urlNode, Self.child(here, kindKey), "'\(url)' is not an http:// or https:// URL")
            return nil
        }
        guard let keyNode = f["key"]?.value else { error(item, here, "missing 'key' (the data key it sets)"); return nil }
        guard let key = keyNode.scalar?.string, Template.isValidKey(key) else {
            error(keyNode, Self.child(here, "key"), "expected a binding key (letters, digits, '_', '.', '-')")
            return nil
        }
        var every = HTTPDataSource.defaultEvery
        if let node = f["every"]?.value {
            guard let d = interval(node, Self.child(here, "every")) else { return nil }
            every = d
        }
        if isRSS {
            var items = 10
            if let node = f["items"]?.value {
                guard let n = number(node, Self.child(here, "items"), in: 1...100) else { return nil }
                guard n == n.rounded() else { error(node, Self.child(here, "items"), "expected a whole number"); return nil }
                items = Int(n)
            }
            var summaries = false
            if let node = f["summaries"]?.value {
                guard let b = node.scalar.flatMap({ Bool.construct(from: $0) }) else {
                    error(node, Self.child(here, "summaries"), "expected true or false")
                    return nil
                }
                summaries = b
            }
            return HTTPDataSource(url: url, key: key, every: every, kind: .rss(items: items, summaries: summaries), location: location(item))
        }
        var path: JSONPath?
        if let node = f["json"]?.value {
            guard let text = node.scalar?.string else { error(node, Self.child(here, "json"), "expected a path like \"$.menu[0].name\""); return nil }
            do { path = try JSONPath(parsing: text) } catch {
                self.error(node, Self.child(here, "json"), "'\(text)' is not a path: \(error)")
                return nil
            }
        }
        var headers: [String: String] = [:]
        if let node = f["headers"]?.value {
            guard let mapping = node.mapping else { error(node, Self.child(here, "headers"), "expected a mapping of header names to values"); return nil }
            for (nameNode, valueNode) in mapping {
                let p = Self.child(Self.child(here, "headers"), nameNode.scalar?.string ?? "?")
                guard let name = nameNode.scalar?.string, !name.isEmpty,
                      name.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0 != ":" && $0.value < 127 }) else {
                    error(nameNode, p, "expected a header name (ASCII letters, digits and punctuation, no ':')")
                    return nil
                }
                guard let value = valueNode.scalar?.string, !value.contains("\r"), !value.contains("\n") else {
                    error(valueNode, p, "expected a header value on one line")
                    return nil
                }
                headers[name] = value
            }
        }
        return HTTPDataSource(url: url, key: key, every: every, headers: headers, kind: .http(json: path), location: location(item))
    }

    /// `every`: seconds as a number, or a number with `ms`, `s`, `m` or `h`; 1 s to 1 day.
    func interval(_ node: Node, _ path: String) -> Duration? {
        var seconds: Double?
        if isNumber(node) {
            seconds = YAMLTree.double(node)
        } else if let text = node.scalar?.string {
            let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                if let v = Double(text.dropLast(suffix.count)), v.isFinite { seconds = v * factor }
                break
            }
        }
        guard let seconds else {
            error(node, path, "expected an interval: seconds, or a number with ms, s, m or h (30s, 5m)")
            return nil
        }
        guard (1...86_400).contains(seconds) else {
            error(node, path, "\(node.scalar?.string ?? "") is out of range 1s...24h")
            return nil
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
