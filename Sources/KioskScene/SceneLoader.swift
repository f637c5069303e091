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
        let base = PathNames.directory(of: path)
        return try parse(data: data, file: path, baseDirectory: base, limits: limits, fontAvailable: fontAvailable)
    }

    /// Validates scene text already in memory; `file` is only used to name it in diagnostics.
    public static func parse(data: Data, file: String, baseDirectory: String, limits: SceneLimits = SceneLimits(),
                             fontAvailable: ((String) -> Bool)? = nil) throws(SceneValidationError) -> LoadedScene {
        if data.count > limits.maximumBytes {
            throw SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: SourceLocation(file: file, line: 1, column: 1),
                                                                     path: "", message: "scene file is more than \(limits.maximumBytes) bytes, the limit")])
        }
        let root = try DocumentDecoder.compose(data, file: file, maximumBytes: limits.maximumBytes, maximumFlowDepth: limits.maximumFlowDepth,
                                               emptyMessage: "the scene file is empty; it needs 'pages' or 'widgets'")
        let decoder = SceneDecoder(file: file, baseDirectory: baseDirectory, limits: limits)
        let scene = decoder.scene(root)
        if let fontAvailable {
            for use in decoder.fontFamilies where !fontAvailable(use.family) {
                decoder.report(.warning, use.location, use.path,
                               "font family '\(use.family)' not found; falling back to \(Font.defaultFamily)")
            }
        }
        let diagnostics = decoder.sortedDiagnostics
        guard let scene, !diagnostics.contains(where: { $0.severity == .error }) else {
            throw SceneValidationError(diagnostics: diagnostics)
        }
        return LoadedScene(scene: scene, warnings: diagnostics)
    }

    /// Reads a YAML document (scene, config) of at most `maximumBytes`. `kind` names it in errors: "scene", "config".
    static func readDocument(path: String, maximumBytes: Int, kind: String) throws(SceneValidationError) -> Data {
        let whole = SourceLocation(file: path, line: 1, column: 1)
        func fail(_ message: String) -> SceneValidationError {
            SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: whole, path: "", message: message)])
        }
        // Check the size before reading so a huge file (or a FIFO, /dev/zero) is never pulled into memory. With stat
        // and read, not FileManager and FileHandle: their attribute dictionary starts CoreFoundation's number and
        // string machinery at startup (docs/design.md, "The process").
        var info = stat()
        if stat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR { throw fail("the \(kind) path is a directory, not a file") }
            if info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) > maximumBytes {
                throw fail("\(kind) file is \(info.st_size) bytes; the limit is \(maximumBytes)")
            }
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw fail(code == ENOENT ? "\(kind) file not found" : "cannot read the \(kind) file: \(errnoDescription(code))")
        }
        defer { close(fd) }
        // At most one byte over the limit, which the reader reports as too large; in chunks, so that a small file
        // costs what it holds.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= maximumBytes {
            let wanted = min(chunk.count, maximumBytes + 1 - bytes.count)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, wanted) }
            if n == 0 { break }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw fail("cannot read the \(kind) file: \(errnoDescription(code))")
            }
            bytes.append(contentsOf: chunk[..<n])
        }
        return Data(bytes)
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
