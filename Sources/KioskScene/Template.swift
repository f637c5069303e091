/// Text with `{key}` placeholders filled from data-binding keys; `{{` and `}}` stand for literal braces.
/// An immutable value; any thread.
public struct Template: Sendable, Equatable {
    public enum Part: Sendable, Equatable {
        case literal(String)
        case key(String)
    }

    public var parts: [Part]

    /// The keys the text depends on, in order of first use; a change to any other key leaves it alone.
    public var keys: [String] {
        var seen = Set<String>()
        return parts.compactMap { if case .key(let k) = $0, seen.insert(k).inserted { k } else { nil } }
    }

    /// The text with each key replaced by its value, or by `placeholder` while the key has none.
    public func render(_ values: [String: String], placeholder: String = "–") -> String {
        parts.map {
            switch $0 {
            case .literal(let s): s
            case .key(let k): values[k] ?? placeholder
            }
        }.joined()
    }

    /// Why a template failed to parse, and at which character (0-based, in Unicode scalars).
    public struct SyntaxError: Error, Equatable {
        public var message: String
        public var offset: Int
    }

    public init(parsing text: String) throws(SyntaxError) {
        var parts: [Part] = []
        var literal = ""
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "{" {
                if i + 1 < scalars.count && scalars[i + 1] == "{" { literal.unicodeScalars.append("{"); i += 2; continue }
                guard let close = scalars[(i + 1)...].firstIndex(of: "}") else {
                    throw SyntaxError(message: "binding '{' at character \(i + 1) is never closed with '}'", offset: i)
                }
                let key = String(String.UnicodeScalarView(scalars[(i + 1)..<close]))
                guard Template.isValidKey(key) else {
                    throw SyntaxError(message: key.isEmpty ? "empty binding '{}' at character \(i + 1)"
                                      : "'{\(key)}' at character \(i + 1) is not a binding key (letters, digits, '_', '.', '-'; starting with a letter or '_')",
                                      offset: i)
                }
                if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
                parts.append(.key(key))
                i = close + 1
            } else if c == "}" {
                if i + 1 < scalars.count && scalars[i + 1] == "}" { literal.unicodeScalars.append("}"); i += 2; continue }
                throw SyntaxError(message: "unmatched '}' at character \(i + 1) (write '}}' for a literal brace)", offset: i)
            } else {
                literal.unicodeScalars.append(c)
                i += 1
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
    }

    /// Keys look like identifiers, optionally dotted (`room.temperature`), so they read the same in a scene and
    /// in a control-socket request.
    public static func isValidKey(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else { return false }
        return key.unicodeScalars.allSatisfy { $0 == "_" || $0 == "." || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
