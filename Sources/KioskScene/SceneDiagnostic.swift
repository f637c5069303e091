/// One problem found in a scene file, printed as one line: `FILE:LINE:COL: PATH: message`, warnings prefixed
/// `warning: `. An immutable value; any thread.
public struct SceneDiagnostic: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: Sendable, Equatable { case error, warning }
    public var severity: Severity
    public var location: SourceLocation
    /// Where in the scene, e.g. `pages[0].widgets[3].font.size`; empty for the file as a whole.
    public var path: String
    public var message: String

    public init(severity: Severity, location: SourceLocation, path: String, message: String) {
        self.severity = severity
        self.location = location
        self.path = path
        self.message = message
    }

    public var description: String {
        let body = path.isEmpty ? "\(location): \(message)" : "\(location): \(path): \(message)"
        return severity == .warning ? "warning: " + body : body
    }
}

/// A scene file that failed validation, with every error found (not just the first) and any warnings.
/// An immutable value; any thread.
public struct SceneValidationError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [SceneDiagnostic]

    public init(diagnostics: [SceneDiagnostic]) { self.diagnostics = diagnostics }

    public var errors: [SceneDiagnostic] { diagnostics.filter { $0.severity == .error } }
    public var warnings: [SceneDiagnostic] { diagnostics.filter { $0.severity == .warning } }
    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// A valid scene and the warnings it raised (unknown fonts, for instance). An immutable value; any thread.
public struct LoadedScene: Sendable {
    public var scene: Scene
    public var warnings: [SceneDiagnostic]

    public init(scene: Scene, warnings: [SceneDiagnostic] = []) {
        self.scene = scene
        self.warnings = warnings
    }
}
