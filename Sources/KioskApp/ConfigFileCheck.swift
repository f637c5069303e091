import KioskCore
import KioskScene

/// What `kioskd check-config` says of a config file, without touching the display: the config itself, the board
/// file it names and each output's scene file (a scene by URL is checked by the run that fetches it; which
/// connectors exist only a run can tell). Pure apart from reading the files; any thread.
public enum ConfigFileCheck {
    /// The lines to print on stderr, in order: the warnings of what was read, then the problems of the first file
    /// that has any (each diagnostic on a line of its own). `passed` when there were none.
    public struct Report: Sendable, Equatable {
        public var warnings: [String] = []
        public var problems: [String] = []
        public var passed: Bool { problems.isEmpty }
    }

    /// - Throws: what reading the config file throws when it cannot be read at all.
    public static func check(path: String) throws -> Report {
        var warnings: [String] = []
        let problems: [String]
        do {
            problems = try check(path: path, warnings: &warnings)
        } catch let error as SceneValidationError {
            problems = error.diagnostics.map { "\($0)" }
        }
        return Report(warnings: warnings, problems: problems)
    }

    private static func check(path: String, warnings: inout [String]) throws -> [String] {
        let loaded = try ConfigLoader.load(path: path)
        warnings += loaded.warnings.map { "\($0)" }
        if let board = loaded.config.board {
            do { _ = try BoardConfig.load(path: board) } catch { return ["\(error)"] }
        }
        for output in loaded.config.outputs {
            guard let scene = output.scene, scene != "default", !RemoteAsset.isFetched(scene) else { continue }
            let checked = try SceneLoader.load(path: scene, limits: loaded.config.sceneLimits)
            warnings += checked.warnings.map { "\($0)" }
        }
        return []
    }
}
