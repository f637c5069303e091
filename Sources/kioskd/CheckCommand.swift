import ArgumentParser
import Foundation
import KioskScene

/// `kioskd check SCENE`: validates a scene file without touching the display, like `nginx -t`. Prints `ok`
/// (after any warnings) and exits 0, or every error one a line on stderr and exits 1. Runs on the main thread of
/// a short-lived process, so reading files and running fc-list synchronously is fine here.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a scene file (YAML or JSON) without touching the display.")

    @Argument(help: "The scene file.")
    var scene: String

    @Flag(help: "Do not ask fontconfig whether the fonts the scene names are installed.")
    var noFontCheck = false

    @Option(help: "The config file whose memory.max_image_pixels and video.allowed_schemes apply (default /etc/kioskd/kioskd.yaml when it exists).")
    var config: String?

    func run() throws {
        if RemoteAsset.isFetched(scene) {
            FileHandle.standardError.write(Data("\(scene): kioskd check reads a file; fetch the scene (curl -o scene.yaml URL) and check that copy (kioskd validates a scene named by URL itself each time it fetches a new version)\n".utf8))
            throw ExitCode(1)
        }
        let families = noFontCheck ? nil : InstalledFonts.families()
        let fontAvailable: ((String) -> Bool)? = families.map { installed in { installed.contains($0.lowercased()) } }
        do {
            let limits = try configLimits()
            let loaded = try SceneLoader.load(path: scene, limits: limits, fontAvailable: fontAvailable)
            for warning in loaded.warnings { FileHandle.standardError.write(Data("\(warning)\n".utf8)) }
            print("ok")
        } catch {
            for diagnostic in error.diagnostics { FileHandle.standardError.write(Data("\(diagnostic)\n".utf8)) }
            throw ExitCode(1)
        }
    }
}

extension CheckCommand {
    /// The scene limits of the config file (`--config`, else the system's when it exists), else the defaults.
    func configLimits() throws(SceneValidationError) -> SceneLimits {
        let path = config ?? (FileManager.default.fileExists(atPath: KioskConfig.defaultPath) ? KioskConfig.defaultPath : nil)
        guard let path else { return SceneLimits() }
        return try ConfigLoader.load(path: path).config.sceneLimits
    }
}

/// Font families fontconfig knows, read once through `fc-list` (the scene module spawns no processes, so the
/// CLI supplies the answer). A plain value built on the calling thread.
enum InstalledFonts {
    /// Lower-cased family names, plus fontconfig's generic aliases; nil when fc-list is missing or fails, in
    /// which case fonts are not checked at all rather than all reported missing.
    static func families() -> Set<String>? {
        let candidates = ["/usr/bin/fc-list", "/bin/fc-list", "/usr/local/bin/fc-list"]
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [":", "family"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        // One line per font; a line lists the family under several names separated by commas.
        var names: Set<String> = ["sans", "sans-serif", "serif", "monospace", "mono", "system-ui"]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            for name in line.split(separator: ",") { names.insert(name.trimmingCharacters(in: .whitespaces).lowercased()) }
        }
        return names
    }
}
