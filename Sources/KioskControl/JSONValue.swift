import Foundation

/// A JSON value as the control protocol carries it: request ids, arguments, results and event data. A plain
/// value; any thread.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// Integers stay integers on the wire (sequence numbers, nanosecond timestamps lose digits as doubles).
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// True for the values a request id may be: null, a boolean, a number or a string.
    public var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d) where d.rounded() == d && abs(d) < 9.0e18: return Int64(d)
        default: return nil
        }
    }
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o }; return nil }

    /// The JSON type name, for error messages ("expected a string, got number").
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int, .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Bool before the numbers: the decoder refuses to read `true` as a number, but not the other way round
        // on every Foundation, so the order keeps `1` a number and `true` a boolean.
        if container.decodeNil() {
            self = .null
        } else if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? container.decode(Int64.self) {
            self = .int(i)
        } else if let d = try? container.decode(Double.self) {
            self = .double(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let a = try? container.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .int(let i): try container.encode(i)
        case .double(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let a): try container.encode(a)
        case .object(let o): try container.encode(o)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue {
    /// Any `Encodable` value as a JSON value, keys converted to snake_case when asked (the `--stats-out` style).
    public init(encoding value: some Encodable, snakeCaseKeys: Bool = false) throws {
        let encoder = JSONEncoder()
        if snakeCaseKeys { encoder.keyEncodingStrategy = .convertToSnakeCase }
        self = try JSONDecoder().decode(JSONValue.self, from: encoder.encode(value))
    }

    /// One line of compact JSON, keys sorted so output is stable; no newline inside (strings escape theirs).
    public func jsonLine() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}

extension JSONValue {
    /// The first key that appears twice in one object of `text`, with where that object sits (`args.values`, or
    /// empty for the outermost), or nil when every object's keys are distinct. Keys are compared after unescaping,
    /// so `"cmd"` and `"\u0063md"` are the same key. `text` must already be valid JSON: Foundation's parsers keep
    /// one of two equal keys without a word, so this scan is what lets a request with one be refused.
    public static func firstDuplicateKey(in text: some Collection<UInt8>) -> (key: String, path: String)? {
        var scanner = DuplicateKeyScanner()
        for byte in text {
            if let found = scanner.feed(byte) { return found }
        }
        return nil
    }
}

/// The state of `firstDuplicateKey`'s single pass: the open objects and arrays, and the string being read. A
/// plain value; any thread.
private struct DuplicateKeyScanner {
    private enum Container {
        case object(name: String, keys: Set<String>, expectingKey: Bool, lastKey: String)
        case array(name: String, index: Int)
    }

    private var stack: [Container] = []
    private var string: [UInt8]?
    private var escaped = false

    mutating func feed(_ byte: UInt8) -> (key: String, path: String)? {
        if string != nil {
            if escaped {
                escaped = false
            } else if byte == 0x5C {
                escaped = true
            } else if byte == 0x22 {
                return finishString()
            }
            string?.append(byte)
            return nil
        }
        switch byte {
        case 0x22: string = []
        case 0x7B: stack.append(.object(name: childName, keys: [], expectingKey: true, lastKey: ""))
        case 0x5B: stack.append(.array(name: childName, index: 0))
        case 0x7D, 0x5D: _ = stack.popLast()
        case 0x2C:
            switch stack.last {
            case .object(let name, let keys, _, let lastKey)?: stack[stack.count - 1] = .object(name: name, keys: keys, expectingKey: true, lastKey: lastKey)
            case .array(let name, let index)?: stack[stack.count - 1] = .array(name: name, index: index + 1)
            case nil: break
            }
        default: break
        }
        return nil
    }

    private mutating func finishString() -> (key: String, path: String)? {
        let raw = string ?? []
        string = nil
        guard case .object(let name, var keys, true, _)? = stack.last else { return nil }
        let key = Self.unescape(raw)
        if keys.contains(key) { return (key, name) }
        keys.insert(key)
        stack[stack.count - 1] = .object(name: name, keys: keys, expectingKey: false, lastKey: key)
        return nil
    }

    /// Where a container opened now sits: its parent's path plus the key or index it is the value of.
    private var childName: String {
        switch stack.last {
        case nil: return ""
        case .object(let name, _, _, let lastKey)?: return name.isEmpty ? lastKey : name + "." + lastKey
        case .array(let name, let index)?: return "\(name)[\(index)]"
        }
    }

    private static func unescape(_ raw: [UInt8]) -> String {
        guard raw.contains(0x5C) else { return String(decoding: raw, as: UTF8.self) }
        let quoted = Data([0x22] + raw + [0x22])
        return (try? JSONSerialization.jsonObject(with: quoted, options: .fragmentsAllowed) as? String) ?? String(decoding: raw, as: UTF8.self)
    }
}
