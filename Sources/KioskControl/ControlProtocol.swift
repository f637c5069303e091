import Foundation
import KioskCore

/// An error reply's `code` (snake_case, stable: scripts match on it) and `message` (for people). Handlers throw
/// it to answer with an error. A plain value; any thread.
public struct ControlError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    public static func invalidJSON(_ message: String) -> ControlError { .init(code: "invalid_json", message: message) }
    public static func invalidRequest(_ message: String) -> ControlError { .init(code: "invalid_request", message: message) }
    public static func unknownCommand(_ name: String) -> ControlError {
        .init(code: "unknown_command", message: "unknown command '\(name)'")
    }
    public static func invalidArgument(_ message: String) -> ControlError { .init(code: "invalid_argument", message: message) }
    public static func lineTooLong(limit: Int) -> ControlError {
        .init(code: "line_too_long", message: "line exceeds \(limit) bytes; closing the connection")
    }
    public static func permissionDenied(_ message: String) -> ControlError { .init(code: "permission_denied", message: message) }
    public static func tooManyClients(limit: Int) -> ControlError {
        .init(code: "too_many_clients", message: "the server already has \(limit) clients")
    }
    public static func internalError(_ message: String) -> ControlError { .init(code: "internal_error", message: message) }
}

/// A decoded request line: `{"id": <scalar>, "cmd": "<name>", "args": {...}}`. A plain value; any thread.
public struct ControlRequest: Sendable, Equatable {
    /// `.null` when the request had none: replies always carry an `id`, so clients can rely on the key.
    public var id: JSONValue
    public var command: String
    public var arguments: ControlArguments

    public init(id: JSONValue = .null, command: String, arguments: [String: JSONValue] = [:]) {
        self.id = id
        self.command = command
        self.arguments = ControlArguments(arguments, command: command)
    }

    /// Decodes one line. On failure returns the error and whatever id could be read, so even a bad request's
    /// reply names it when possible.
    public static func decode(_ line: some Collection<UInt8>) -> Result<ControlRequest, RequestFailure> {
        if exceedsNesting(line, limit: maximumNestingDepth) {
            return .failure(RequestFailure(id: .null, error: .invalidJSON("the line nests arrays or objects deeper than \(maximumNestingDepth) levels")))
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(line))
        } catch {
            return .failure(RequestFailure(id: .null, error: .invalidJSON("the line is not valid JSON")))
        }
        guard case .object(let members) = value else {
            return .failure(RequestFailure(id: .null, error: .invalidRequest("a request is a JSON object, got \(value.typeName)")))
        }
        if let duplicate = JSONValue.firstDuplicateKey(in: line) {
            // The id is named only when it is not itself the duplicated key: which of two ids is meant is unknown.
            let place = duplicate.path.isEmpty ? "the request" : "'\(duplicate.path)'"
            let id = duplicate.path.isEmpty && duplicate.key == "id" ? .null : (members["id"].flatMap { $0.isScalar ? $0 : nil } ?? .null)
            return .failure(RequestFailure(id: id, error: .invalidRequest("duplicate key '\(duplicate.key)' in \(place)")))
        }
        let id = members["id"] ?? .null
        guard id.isScalar else {
            return .failure(RequestFailure(id: .null, error: .invalidRequest("'id' must be a string, number, boolean or null, got \(id.typeName)")))
        }
        guard let cmdValue = members["cmd"] else {
            return .failure(RequestFailure(id: id, error: .invalidRequest("missing 'cmd'")))
        }
        guard case .string(let command) = cmdValue else {
            return .failure(RequestFailure(id: id, error: .invalidRequest("'cmd' must be a string, got \(cmdValue.typeName)")))
        }
        var arguments: [String: JSONValue] = [:]
        switch members["args"] {
        case nil, .null?: break
        case .object(let args)?: arguments = args
        case let other?:
            return .failure(RequestFailure(id: id, error: .invalidRequest("'args' must be an object, got \(other.typeName)")))
        }
        return .success(ControlRequest(id: id, command: command, arguments: arguments))
    }

    /// Requests need a few levels (`args.transition.easing`); deeper lines are refused before parsing. Besides
    /// bounding the parser's recursion, this keeps lines away from Foundation's JSON scanner, which crashes the
    /// process (instead of throwing) on a line of 513 or more unclosed `[`.
    public static let maximumNestingDepth = 64

    /// Whether `line` opens more than `limit` arrays or objects at once, brackets inside strings not counted.
    /// Only nesting is judged; everything else is the parser's business.
    static func exceedsNesting(_ line: some Collection<UInt8>, limit: Int) -> Bool {
        var depth = 0, inString = false, escaped = false
        for byte in line {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x5B, 0x7B:
                depth += 1
                if depth > limit { return true }
            case 0x5D, 0x7D: depth -= 1
            default: break
            }
        }
        return false
    }

    /// The encoded request line (without its newline), as a client sends it.
    public func jsonLine() throws -> Data {
        var members: [String: JSONValue] = ["cmd": .string(command)]
        if id != .null { members["id"] = id }
        if !arguments.values.isEmpty { members["args"] = .object(arguments.values) }
        return try JSONValue.object(members).jsonLine()
    }
}

/// Why a line is not a request, with the id when one was readable.
public struct RequestFailure: Error, Sendable, Equatable {
    public var id: JSONValue
    public var error: ControlError
}

/// A request's `args`, with typed accessors that answer `invalid_argument` naming the command and key. A plain
/// value; any thread.
public struct ControlArguments: Sendable, Equatable {
    public let values: [String: JSONValue]
    public let command: String
    /// Where these arguments sit in the request (`transition.` for a nested object), for error messages.
    public let path: String

    public init(_ values: [String: JSONValue], command: String, path: String = "") {
        self.values = values
        self.command = command
        self.path = path
    }

    public subscript(key: String) -> JSONValue? { values[key] }

    private func mismatch(_ key: String, expected: String, got: JSONValue) -> ControlError {
        .invalidArgument("\(command): '\(path)\(key)' must be \(expected), got \(got.typeName)")
    }

    private func required(_ key: String) throws(ControlError) -> JSONValue {
        guard let value = values[key], value != .null else { throw .invalidArgument("\(command): missing '\(path)\(key)'") }
        return value
    }

    public func string(_ key: String) throws(ControlError) -> String {
        let value = try required(key)
        guard let s = value.stringValue else { throw mismatch(key, expected: "a string", got: value) }
        return s
    }

    public func bool(_ key: String) throws(ControlError) -> Bool {
        let value = try required(key)
        guard let b = value.boolValue else { throw mismatch(key, expected: "a boolean", got: value) }
        return b
    }

    /// An `invalid_argument` error about `key`'s value: `problem` completes "'key' ...".
    public func invalid(_ key: String, _ problem: String) -> ControlError {
        .invalidArgument("\(command): '\(path)\(key)' \(problem)")
    }

    /// True when `key` is present and not null: optional arguments are read only then.
    public func has(_ key: String) -> Bool {
        if let value = values[key], value != .null { return true }
        return false
    }

    /// A finite number.
    public func number(_ key: String) throws(ControlError) -> Double {
        let value = try required(key)
        guard let d = value.doubleValue, d.isFinite else { throw mismatch(key, expected: "a number", got: value) }
        return d
    }

    /// A whole number (an integer in the JSON, or a number with no fraction), read without going through a double.
    public func integer(_ key: String) throws(ControlError) -> Int64 {
        let value = try required(key)
        guard let i = value.intValue else { throw mismatch(key, expected: "a whole number", got: value) }
        return i
    }

    /// A number, or one or more numbers in an array (`[x, y]` for a position, `[r, g, b, a]` for a colour).
    public func numbers(_ key: String) throws(ControlError) -> [Double] {
        let value = try required(key)
        if let d = value.doubleValue { return [d] }
        guard let array = value.arrayValue, !array.isEmpty else {
            throw mismatch(key, expected: "a number or a non-empty array of numbers", got: value)
        }
        return try array.map { (element) throws(ControlError) -> Double in
            guard let d = element.doubleValue else { throw mismatch(key, expected: "a number or a non-empty array of numbers", got: element) }
            return d
        }
    }

    public func object(_ key: String) throws(ControlError) -> [String: JSONValue] {
        let value = try required(key)
        guard let o = value.objectValue else { throw mismatch(key, expected: "an object", got: value) }
        return o
    }

    /// The arguments of an object argument (`transition: {...}`), whose errors name `parent.key`; a key outside
    /// `known` is refused as `refuseUnknown` does.
    public func nested(_ key: String, known: Set<String>) throws(ControlError) -> ControlArguments {
        let arguments = ControlArguments(try object(key), command: command, path: path + key + ".")
        try arguments.refuseUnknown(known: known)
        return arguments
    }

    /// Throws `invalid_argument` for the first argument (in sorted order) outside `known`, naming it and the nearest
    /// known name, or listing the known names when none is near.
    public func refuseUnknown(known: Set<String>) throws(ControlError) {
        guard let unknown = values.keys.sorted().first(where: { !known.contains($0) }) else { return }
        let names = known.sorted()
        let hint: String
        if let near = Suggestion.nearest(to: unknown, in: names) {
            hint = "; did you mean '\(path)\(near)'?"
        } else if names.isEmpty {
            hint = path.isEmpty ? "; \(command) takes no arguments" : "; '\(path.dropLast())' takes no keys"
        } else {
            hint = "; known: \(names.map { "'\(path)\($0)'" }.joined(separator: ", "))"
        }
        throw .invalidArgument("\(command): unknown argument '\(path)\(unknown)'\(hint)")
    }

    public func stringArray(_ key: String) throws(ControlError) -> [String] {
        let value = try required(key)
        guard let array = value.arrayValue else { throw mismatch(key, expected: "an array of strings", got: value) }
        return try array.map { (element) throws(ControlError) -> String in
            guard let s = element.stringValue else { throw mismatch(key, expected: "an array of strings", got: element) }
            return s
        }
    }
}

/// The lines the server sends. A namespace; any thread.
public enum ControlMessage {
    public static func success(id: JSONValue, result: JSONValue) -> JSONValue {
        ["id": id, "ok": true, "result": result]
    }

    public static func failure(id: JSONValue, error: ControlError) -> JSONValue {
        ["id": id, "ok": false, "error": ["code": .string(error.code), "message": .string(error.message)]]
    }

    public static func event(_ name: String, data: JSONValue) -> JSONValue {
        ["event": .string(name), "data": data]
    }

    /// `value` as one line with its `\n`. Encoding fails only for non-finite numbers a handler produced; the
    /// reply then says so instead of leaving the client waiting.
    public static func line(_ value: JSONValue) -> [UInt8] {
        var data: Data
        do {
            data = try value.jsonLine()
        } catch {
            let fallback = failure(id: value["id"] ?? .null, error: .internalError("the result cannot be encoded as JSON: \(error)"))
            data = (try? fallback.jsonLine()) ?? Data(#"{"id":null,"ok":false,"error":{"code":"internal_error","message":"unencodable reply"}}"#.utf8)
        }
        data.append(0x0A)
        return [UInt8](data)
    }
}
