import Foundation
import KioskCore
import Yams

/// Reads a scene file and validates all of it, collecting every error rather than stopping at the first.
/// Synchronous file I/O (the scene and the images it names): call it from the CLI or a worker, never on the main
/// loop. Stateless; any thread.
public enum SceneLoader {
    /// Reads and validates the scene at `path`. Relative image paths resolve against the file's folder.
    /// `fontAvailable`, when given, is asked about every font family; a `false` gives a warning (rendering falls
    /// back to Sans), never an error, because a missing font still leaves a usable screen.
    public static func load(path: String, limits: SceneLimits = SceneLimits(),
                            fontAvailable: ((String) -> Bool)? = nil) throws(SceneValidationError) -> LoadedScene {
        let data = try readDocument(path: path, maximumBytes: limits.maximumBytes, kind: "scene")
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(data: data, file: path, baseDirectory: base, limits: limits, fontAvailable: fontAvailable)
    }

    /// Validates scene text already in memory; `file` is only used to name it in diagnostics.
    public static func parse(data: Data, file: String, baseDirectory: String, limits: SceneLimits = SceneLimits(),
                             fontAvailable: ((String) -> Bool)? = nil) throws(SceneValidationError) -> LoadedScene {
        let root = try composeDocument(data: data, file: file, limits: limits, kind: "scene")
        func fail(_ message: String) -> SceneValidationError {
            SceneValidationError(diagnostics: [SceneDiagnostic(
                severity: .error, location: SourceLocation(file: file, line: 1, column: 1), path: "", message: message)])
        }
        guard let root else { throw fail("the scene file is empty; it needs 'pages' or 'widgets'") }
        let decoder = SceneDecoder(file: file, baseDirectory: baseDirectory, limits: limits)
        let scene = decoder.scene(root)
        if let fontAvailable {
            for use in decoder.fontFamilies where !fontAvailable(use.family) {
                decoder.report(.warning, use.location, use.path,
                               "font family '\(use.family)' not found; falling back to \(Font.defaultFamily)")
            }
        }
        let diagnostics = readingOrder(decoder.diagnostics)
        guard let scene, !diagnostics.contains(where: { $0.severity == .error }) else {
            throw SceneValidationError(diagnostics: diagnostics)
        }
        return LoadedScene(scene: scene, warnings: diagnostics)
    }

    /// Checks run in the order values are decoded, not the order they appear; sorted so the lines read top down,
    /// errors first and the warnings after them.
    static func readingOrder(_ diagnostics: [SceneDiagnostic]) -> [SceneDiagnostic] {
        diagnostics.enumerated().sorted { a, b in
            let ka = (a.element.severity == .error ? 0 : 1, a.element.location.line, a.element.location.column, a.offset)
            let kb = (b.element.severity == .error ? 0 : 1, b.element.location.line, b.element.location.column, b.offset)
            return ka < kb
        }.map(\.element)
    }

    /// Reads a YAML document (scene, config) of at most `maximumBytes`. `kind` names it in errors: "scene", "config".
    static func readDocument(path: String, maximumBytes: Int, kind: String) throws(SceneValidationError) -> Data {
        let whole = SourceLocation(file: path, line: 1, column: 1)
        func fail(_ message: String) -> SceneValidationError {
            SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: whole, path: "", message: message)])
        }
        // Check the size before reading so a huge file (or a FIFO, /dev/zero) is never pulled into memory.
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        if let size = (attributes?[.size] as? NSNumber)?.intValue, size > maximumBytes {
            throw fail("\(kind) file is \(size) bytes; the limit is \(maximumBytes)")
        }
        if attributes?[.type] as? FileAttributeType == .typeDirectory { throw fail("the \(kind) path is a directory, not a file") }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw fail(code == ENOENT ? "\(kind) file not found" : "cannot read the \(kind) file: \(errnoDescription(code))")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do { return try handle.read(upToCount: maximumBytes + 1) ?? Data() } catch {
            throw fail("cannot read the \(kind) file: \(error.localizedDescription)")
        }
    }

    /// Composes YAML text into a node tree, with located errors for bad UTF-8, deep nesting and YAML syntax.
    /// Nil for an empty document.
    static func composeDocument(data: Data, file: String, limits: SceneLimits, kind: String) throws(SceneValidationError) -> Node? {
        func fail(_ message: String, line: Int = 1, column: Int = 1) -> SceneValidationError {
            SceneValidationError(diagnostics: [SceneDiagnostic(
                severity: .error, location: SourceLocation(file: file, line: line, column: column), path: "", message: message)])
        }
        if data.count > limits.maximumBytes {
            throw fail("\(kind) file is more than \(limits.maximumBytes) bytes, the limit")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            let (line, column, byte) = UTF8Position.firstInvalid(in: data)
            throw fail(String(format: "not UTF-8 text: invalid byte sequence starting with 0x%02X", byte), line: line, column: column)
        }
        if let (line, column) = FlowDepthScan.firstPositionDeeper(than: limits.maximumFlowDepth, in: text) {
            throw fail("nesting deeper than \(limits.maximumFlowDepth) levels", line: line, column: column)
        }
        do {
            return try Yams.compose(yaml: text)
        } catch let error as YamlError {
            let (message, mark) = describe(error)
            throw fail(message, line: mark?.line ?? 1, column: mark?.column ?? 1)
        } catch {
            throw fail("YAML: \(error)".replacingOccurrences(of: "\n", with: " "))
        }
    }

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

/// Locates the first byte that breaks UTF-8, as a line and column an editor shows. Stateless; any thread.
enum UTF8Position {
    static func firstInvalid(in data: Data) -> (line: Int, column: Int, byte: UInt8) {
        let bytes = [UInt8](data)
        var line = 1, column = 1, i = 0
        while i < bytes.count {
            let b = bytes[i]
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch b {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; second = 0xA0...0xBF
            case 0xED: length = 3; second = 0x80...0x9F
            case 0xE1...0xEF: length = 3
            case 0xF0: length = 4; second = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; second = 0x80...0x8F
            default: return (line, column, b)
            }
            for k in 1..<max(length, 1) {
                guard i + k < bytes.count else { return (line, column, b) }
                let range: ClosedRange<UInt8> = k == 1 ? second : 0x80...0xBF
                guard range.contains(bytes[i + k]) else { return (line, column, b) }
            }
            if b == 0x0A { line += 1; column = 1 } else { column += 1 }
            i += length
        }
        return (line, column, 0)
    }
}

/// Finds flow collections (`[...]`, `{...}`) nested past a bound without composing the YAML, whose composer
/// recurses once per level. Quotes and comments are skipped roughly; a misread can only undercount real nesting
/// in a file that is not a scene anyway, so the scan errs towards letting YAML report the problem.
/// Stateless; any thread.
enum FlowDepthScan {
    static func firstPositionDeeper(than limit: Int, in text: String) -> (Int, Int)? {
        var depth = 0, line = 1, column = 0
        var quote: Character? = nil
        var inComment = false
        var previous: Character = "\n"
        for c in text {
            column += 1
            defer { previous = c }
            if c == "\n" { line += 1; column = 0; inComment = false; if depth == 0 { quote = nil }; continue }
            if inComment { continue }
            if let q = quote { if c == q { quote = nil }; continue }
            let afterBreak = previous == "\n" || previous == " " || previous == "\t" || "[{,:".contains(previous)
            switch c {
            case "\"" where afterBreak, "'" where afterBreak: quote = c
            case "#" where previous == " " || previous == "\t" || previous == "\n": inComment = true
            case "[", "{":
                depth += 1
                if depth > limit { return (line, column) }
            case "]", "}": depth = max(0, depth - 1)
            default: break
            }
        }
        return nil
    }
}
