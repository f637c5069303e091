import Foundation
import KioskScene

/// The page shown in place of a scene that cannot be shown, so a kiosk never shows a black screen: a scene file
/// missing or invalid at start, or a configuration kioskd could not use (its config file, a board file, the MQTT
/// password file). It says what is wrong (each error as `FILE:LINE:COL: path: problem`), which file, how to
/// recover, kioskd's version and the control socket. It is the bundled `diagnostic.yaml`, an ordinary scene whose
/// data keys carry the details, so it goes through the normal scene pipeline. Stateless; any thread.
public enum DiagnosticPage {
    /// At most this many errors are listed; the rest are counted.
    static let maximumErrors = 8

    /// The file at fault, as the page names it, and how it is put right. A plain value; any thread.
    public struct Subject: Sendable, Equatable {
        /// What the file is: `Scene file`, `Config file`, `Board file`, `MQTT password file`.
        public var label: String
        public var path: String
        /// How the page is replaced once the file is fixed.
        public var hint: String

        public init(label: String, path: String, hint: String) {
            self.label = label
            self.path = path
            self.hint = hint
        }

        /// A scene named by URL: fetched again until a valid copy arrives.
        public static func remoteScene(_ url: String) -> Subject {
            Subject(label: "Scene URL", path: url,
                    hint: "kioskd fetches it again (every 60 s at most, and at SIGHUP) and shows it once a valid copy arrives; or load a scene over the control socket.")
        }

        /// A scene file: the watch reloads it when saved.
        public static func scene(_ path: String) -> Subject {
            Subject(label: "Scene file", path: path,
                    hint: "Fix the file (it is reloaded when saved), or load a scene over the control socket.")
        }
    }

    /// The diagnostic scene for `error` on `subject`.
    /// - Throws: the bundled template's own validation error (a broken installation).
    public static func scene(for subject: Subject, error: any Error, version: String, socket: String) throws -> Scene {
        guard let directory = BundledScenes.directory else {
            throw StageError(.ioError, "diagnostic page: the bundled scenes are missing (kioskd_KioskRuntime.resources)")
        }
        var scene = try SceneLoader.load(path: (directory as NSString).appendingPathComponent("builtin/diagnostic.yaml")).scene
        scene.data["problem"] = describe(error)
        scene.data["file_label"] = subject.label
        scene.data["file"] = subject.path
        scene.data["hint"] = subject.hint
        scene.data["version"] = version
        scene.data["socket"] = socket
        return scene
    }

    /// The errors one a line, at most `maximumErrors`.
    static func describe(_ error: any Error) -> String {
        guard let validation = error as? SceneValidationError else { return "\(error)" }
        let errors = validation.errors
        var lines = errors.prefix(maximumErrors).map(\.description)
        if errors.count > maximumErrors { lines.append("… and \(errors.count - maximumErrors) more (kioskd check shows them all)") }
        return lines.joined(separator: "\n")
    }
}
