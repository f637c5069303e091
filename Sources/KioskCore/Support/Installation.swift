import Foundation

/// kioskd's version, in one place: `kioskd --version`, `kioskctl --version`, the `version` command, the
/// diagnostic page and the Debian package (`scripts/package-deb` asks the built binary) all read it.
public enum KioskVersion {
    public static let string = "0.1.0"
}

/// Where an installed kioskd keeps its data: `<prefix>/share/kioskd` beside the `<prefix>/bin` its executable is
/// in (`/usr/share/kioskd` for `/usr/bin/kioskd`, as the Debian package installs it). A build tree has no such
/// folder; its resource bundles sit next to the binaries instead. Stateless; any thread.
public enum InstalledData {
    /// `<prefix>/share/kioskd/<name>` when it exists.
    public static func directory(_ name: String) -> String? {
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath()
        let prefix = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            ?? executable.deletingLastPathComponent().deletingLastPathComponent()
        let path = prefix.appendingPathComponent("share/kioskd/\(name)").path
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue ? path : nil
    }
}
