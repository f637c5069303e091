import Foundation
import KioskScene

/// The page shown in place of a scene that is missing or invalid at start, so a kiosk never shows a black
/// screen: what is wrong (each error as `FILE:LINE:COL: path: problem`), the scene file, kioskd's version and the
/// control socket. It is the bundled `diagnostic.yaml`, an ordinary scene whose data keys carry the details, so
/// it goes through the normal scene pipeline. Stateless; any thread.
public enum DiagnosticPage {
    /// At most this many errors are listed; the rest are counted.
    static let maximumErrors = 8

    /// The diagnostic scene for `error` on `scenePath`.
    /// - Throws: the bundled template's own validation error (a broken installation).
    public static func scene(scenePath: String, error: any Error, version: String, socket: String) throws -> Scene {
        guard let directory = BundledScenes.directory else {
            throw StageError(.ioError, "diagnostic page: the bundled scenes are missing (kioskd_KioskRuntime.resources)")
        }
        var scene = try SceneLoader.load(path: (directory as NSString).appendingPathComponent("builtin/diagnostic.yaml")).scene
        scene.data["problem"] = describe(error)
        scene.data["scene"] = scenePath
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
