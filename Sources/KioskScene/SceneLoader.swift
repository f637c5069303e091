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
        let file = try openDocument(path: path, kind: "scene")
        return try load(file, limits: limits, fontAvailable: fontAvailable)
    }

    /// Reads and validates the scene file already opened (`openDocument`, or a caller that told its own errors apart).
    public static func load(_ file: RegularFile, limits: SceneLimits = SceneLimits(),
                            fontAvailable: ((String) -> Bool)? = nil) throws(SceneValidationError) -> LoadedScene {
        let data = try readDocument(file, maximumBytes: limits.maximumBytes, kind: "scene")
        let base = PathNames.directory(of: file.path)
        return try parse(data: data, file: file.path, baseDirectory: base, limits: limits, fontAvailable: fontAvailable)
    }

    /// Reads and validates the copy at `file` of a scene fetched from `url` (kioskd's asset cache): diagnostics name
    /// the URL, and relative names in it resolve against the URL, as a browser resolves a page's links; absolute
    /// paths stay files on the board.
    public static func load(remoteCopy file: String, url: String, limits: SceneLimits = SceneLimits()) throws(SceneValidationError) -> LoadedScene {
        let opened: RegularFile
        do {
            opened = try RegularFile(opening: file)
        } catch {
            throw documentError(path: url, message: "cannot read the cached copy \(file): \(error.problem)")
        }
        let data = try readDocument(opened, maximumBytes: limits.maximumBytes, kind: "scene")
        return try parse(data: data, file: url, baseDirectory: url, limits: limits)
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
        // A scene with `fonts:` brings families fontconfig does not know yet.
        if let fontAvailable, scene?.fonts.isEmpty ?? true {
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

    /// Opens a YAML document (scene, config) as a regular file: a FIFO, a device node such as /dev/zero, a socket or
    /// a directory is refused unread. `kind` names it in errors: "scene", "config".
    public static func openDocument(path: String, kind: String) throws(SceneValidationError) -> RegularFile {
        do {
            return try RegularFile(opening: path)
        } catch {
            let message = switch error.reason {
            case .notFound: "\(kind) file not found"
            case .notRegular: "the \(kind) path \(error.problem)"
            case .system: "cannot read the \(kind) file: \(error.problem)"
            }
            throw documentError(path: path, message: message)
        }
    }

    /// Reads a YAML document (scene, config) of at most `maximumBytes`. `kind` names it in errors: "scene", "config".
    static func readDocument(path: String, maximumBytes: Int, kind: String) throws(SceneValidationError) -> Data {
        try readDocument(try openDocument(path: path, kind: kind), maximumBytes: maximumBytes, kind: kind)
    }

    /// Reads the opened document, checking its size before reading so that a huge file is never pulled into
    /// memory. With `RegularFile`, not FileManager and FileHandle: their attribute dictionary starts
    /// CoreFoundation's number and string machinery at startup (docs/design.md, "The process").
    static func readDocument(_ file: RegularFile, maximumBytes: Int, kind: String) throws(SceneValidationError) -> Data {
        if file.size > maximumBytes {
            throw documentError(path: file.path, message: "\(kind) file is \(file.size) bytes; the limit is \(maximumBytes)")
        }
        // At most one byte over the limit (a file that grew since it was opened), which the parser reports as too
        // large.
        do {
            return Data(try file.contents(maximumBytes: maximumBytes))
        } catch {
            throw documentError(path: file.path, message: "cannot read the \(kind) file: \(error.problem)")
        }
    }

    private static func documentError(path: String, message: String) -> SceneValidationError {
        SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: SourceLocation(file: path, line: 1, column: 1),
                                                           path: "", message: message)])
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
