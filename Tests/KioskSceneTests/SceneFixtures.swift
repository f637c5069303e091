import Foundation
import KioskScene
import XCTest

/// Builds scene files for tests and collects what validation says about them.
enum SceneFixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var examples: URL { repositoryRoot.appendingPathComponent("scenes") }

    /// A fresh directory per test, so image files one test writes never satisfy another.
    static func directory(_ name: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-scene-tests").appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// One page whose widget list starts on line 4: each widget line is placed under `      ` (the `- ` of the
    /// first line of each widget is the caller's), so columns are easy to count in the tests.
    static func onePage(_ widgetLines: [String]) -> String {
        (["pages:", "  - name: main", "    widgets:"] + widgetLines.map { "      " + $0 }).joined(separator: "\n") + "\n"
    }

    /// Writes `text` as `bad.yaml` in `directory` and returns every diagnostic line (errors and warnings),
    /// or `["ok"]` plus the warnings when the scene is valid.
    static func check(_ text: String, in directory: URL, name: String = "bad.yaml", limits: SceneLimits = SceneLimits(),
                      fontAvailable: ((String) -> Bool)? = nil) throws -> (path: String, lines: [String]) {
        let file = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return (file.path, lines(file.path, limits: limits, fontAvailable: fontAvailable))
    }

    static func lines(_ path: String, limits: SceneLimits = SceneLimits(), fontAvailable: ((String) -> Bool)? = nil) -> [String] {
        do {
            let loaded = try SceneLoader.load(path: path, limits: limits, fontAvailable: fontAvailable)
            return loaded.warnings.map(\.description) + ["ok"]
        } catch {
            return error.diagnostics.map(\.description)
        }
    }
}
