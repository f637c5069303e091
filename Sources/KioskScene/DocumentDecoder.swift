import Foundation
import KioskCore
import Yams

/// How every kioskd YAML file is read (scene files, board files): the text composed into a YAML tree, then each
/// value checked where it stands, recording one diagnostic per problem (`FILE:LINE:COL: PATH: message`) and
/// carrying on, so one run shows them all; an unknown key gets the nearest known one as a hint. A reader of one
/// kind of file subclasses it or calls it and adds its own checks. Used once, by one thread.
public class DocumentDecoder {
    public let file: String
    public private(set) var diagnostics: [SceneDiagnostic] = []

    public init(file: String) {
        self.file = file
    }

    /// The YAML tree of `data`, or a one-diagnostic error at the place it fails: larger than `maximumBytes`,
    /// not UTF-8, nested deeper than `maximumFlowDepth` flow levels, beyond `YAMLTree`'s bounds, YAML syntax, or
    /// empty (`emptyMessage`).
    public static func compose(_ data: Data, file: String, maximumBytes: Int, maximumFlowDepth: Int,
                               emptyMessage: String) throws(SceneValidationError) -> Node {
        guard let root = try composeIfAny(data, file: file, maximumBytes: maximumBytes, maximumFlowDepth: maximumFlowDepth) else {
            throw SceneValidationError(diagnostics: [SceneDiagnostic(
                severity: .error, location: SourceLocation(file: file, line: 1, column: 1), path: "", message: emptyMessage)])
        }
        return root
    }

    /// Like `compose`, for files where an empty document (or one with only comments) is valid: nil then.
    public static func composeIfAny(_ data: Data, file: String, maximumBytes: Int,
                                    maximumFlowDepth: Int) throws(SceneValidationError) -> Node? {
        func fail(_ message: String, line: Int = 1, column: Int = 1) -> SceneValidationError {
            SceneValidationError(diagnostics: [SceneDiagnostic(
                severity: .error, location: SourceLocation(file: file, line: line, column: column), path: "", message: message)])
        }
        if data.count > maximumBytes {
            throw fail("file is more than \(maximumBytes) bytes, the limit")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            let (line, column, byte) = UTF8Position.firstInvalid(in: data)
            throw fail(String(format: "not UTF-8 text: invalid byte sequence starting with 0x%02X", byte), line: line, column: column)
        }
        if let (line, column) = FlowDepthScan.firstPositionDeeper(than: maximumFlowDepth, in: text) {
            throw fail("nesting deeper than \(maximumFlowDepth) levels", line: line, column: column)
        }
        let root: Node?
        do {
            root = try YAMLTree.compose(text, maximumNodes: YAMLTree.nodeLimit(forBytes: data.count))
        } catch let refused as YAMLTree.Refused {
            throw fail(refused.message, line: refused.line, column: refused.column)
        } catch let error as YamlError {
            let (message, mark) = describe(error)
            throw fail(message, line: mark?.line ?? 1, column: mark?.column ?? 1)
        } catch {
            throw fail("YAML: \(error)".replacingOccurrences(of: "\n", with: " "))
        }
        return root
    }

    /// The diagnostics so far, top down, errors first and warnings after them (checks run in the order values
    /// are decoded, not the order they appear).
    public var sortedDiagnostics: [SceneDiagnostic] {
        diagnostics.enumerated().sorted { a, b in
            let ka = (a.element.severity == .error ? 0 : 1, a.element.location.line, a.element.location.column, a.offset)
            let kb = (b.element.severity == .error ? 0 : 1, b.element.location.line, b.element.location.column, b.offset)
            return ka < kb
        }.map(\.element)
    }

    /// Throws every diagnostic when any is an error; returns the warnings otherwise.
    public func finish() throws(SceneValidationError) -> [SceneDiagnostic] {
        let sorted = sortedDiagnostics
        if sorted.contains(where: { $0.severity == .error }) { throw SceneValidationError(diagnostics: sorted) }
        return sorted
    }


    public func location(_ node: Node) -> SourceLocation {
        SourceLocation(file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1)
    }

    func report(_ severity: SceneDiagnostic.Severity, _ location: SourceLocation, _ path: String, _ message: String) {
        diagnostics.append(SceneDiagnostic(severity: severity, location: location, path: path, message: message))
    }

    public func error(_ node: Node, _ path: String, _ message: String) {
        report(.error, location(node), path, message)
    }

    public static func child(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    // MARK: Structure

    /// A mapping's entries by key, after reporting keys outside `allowed` (with the nearest known key as a hint).
    public func fields(_ node: Node, _ path: String, allowed: [String], expected: String) -> [String: (key: Node, value: Node)]? {
        guard let mapping = node.mapping else {
            error(node, path, "expected \(expected)")
            return nil
        }
        var result: [String: (key: Node, value: Node)] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else {
                error(keyNode, path, "keys must be plain strings")
                continue
            }
            guard allowed.contains(key) else {
                let hint = Suggestion.nearest(to: key, in: allowed).map { "; did you mean '\($0)'?" } ?? "; known keys: \(allowed.joined(separator: ", "))"
                error(keyNode, Self.child(path, key), "unknown key '\(key)'\(hint)")
                continue
            }
            result[key] = (keyNode, value)
        }
        return result
    }

    // MARK: Scalars

    /// Whether YAML resolved the node to `tag` (plain `12` is an int, quoted `"12"` a string).
    func resolves(_ node: Node, to tag: Tag.Name) -> Bool { node.tag.rawValue == tag.rawValue }

    func isNumber(_ node: Node) -> Bool {
        guard node.scalar != nil else { return false }
        return resolves(node, to: .int) || resolves(node, to: .float)
    }

    public func number(_ node: Node, _ path: String, in range: ClosedRange<Double>? = nil) -> Double? {
        guard isNumber(node), let v = YAMLTree.double(node), v.isFinite else { error(node, path, "expected a number"); return nil }
        if let range, !range.contains(v) {
            error(node, path, "\(format(v)) is out of range \(format(range.lowerBound))...\(format(range.upperBound))")
            return nil
        }
        return v
    }

    public func integer(_ node: Node, _ path: String, in range: ClosedRange<Int>) -> Int? {
        guard node.scalar != nil, resolves(node, to: .int), let v = YAMLTree.int(node) else { error(node, path, "expected a whole number"); return nil }
        guard range.contains(v) else { error(node, path, "\(v) is out of range \(range.lowerBound)...\(range.upperBound)"); return nil }
        return v
    }

    public func bool(_ node: Node, _ path: String) -> Bool? {
        guard node.scalar != nil, resolves(node, to: .bool), let v = YAMLTree.bool(node) else { error(node, path, "expected true or false"); return nil }
        return v
    }

    public func string(_ node: Node, _ path: String) -> String? {
        guard let scalar = node.scalar, !resolves(node, to: .null) else { error(node, path, "expected a string"); return nil }
        return scalar.string
    }

    public func choice<E: RawRepresentable & CaseIterable>(_ node: Node, _ path: String, _: E.Type) -> E? where E.RawValue == String {
        let names = E.allCases.map(\.rawValue)
        guard let s = node.scalar?.string else { error(node, path, "expected one of \(names.joined(separator: ", "))"); return nil }
        if let e = E(rawValue: s) { return e }
        let hint = Suggestion.nearest(to: s, in: names).map { "did you mean '\($0)'? " } ?? ""
        error(node, path, "'\(s)' is not one of \(names.joined(separator: ", ")); \(hint)".trimmingCharacters(in: CharacterSet(charactersIn: "; ")))
        return nil
    }

    func format(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }

    private static func describe(_ error: YamlError) -> (String, Mark?) {
        func join(_ context: YamlError.Context?, _ problem: String) -> String {
            guard let context else { return problem }
            return "\(problem) (\(context.text) at \(context.mark.line):\(context.mark.column))"
        }
        switch error {
        case let .scanner(context, problem, mark, _): return ("YAML syntax: " + join(context, problem), mark)
        case let .parser(context, problem, mark, _): return ("YAML syntax: " + join(context, problem), mark)
        case let .composer(context, problem, mark, _): return ("YAML: " + join(context, problem), mark)
        case let .duplicatedKeysInMapping(duplicates, context):
            return ("duplicate key \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) in a mapping", context.mark)
        default:
            return ("YAML: " + "\(error)".replacingOccurrences(of: "\n", with: " "), nil)
        }
    }
}
