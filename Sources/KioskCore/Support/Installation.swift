import Foundation
import Glibc

/// kioskd's version, in one place: `kioskd --version`, `kioskctl --version`, the `version` command, the
/// diagnostic page and the Debian package (`scripts/package-deb` asks the built binary) all read it.
public enum KioskVersion {
    public static let string = "0.1.0"
}

/// Where an installed kioskd keeps its data: `<prefix>/share/kioskd` beside the `<prefix>/bin` its executable is
/// in (`/usr/share/kioskd` for `/usr/bin/kioskd`, as the Debian package installs it). A build tree has no such
/// folder; its resource bundles sit next to the binaries instead. The executable's path is the kernel's
/// (`/proc/self/exe`, symlinks resolved), else `argv[0]` resolved: Foundation's `Bundle.main` would start
/// CoreFoundation's bundle, URL and character-set machinery for it, about 0.5 MB of resident code at startup.
/// Stateless; any thread.
public enum InstalledData {
    /// `<prefix>/share/kioskd/<name>` when it exists.
    public static func directory(_ name: String) -> String? {
        guard let bin = executableDirectory else { return nil }
        let path = parent(of: bin) + "/share/kioskd/" + name
        return isDirectory(path) ? path : nil
    }

    /// The folder holding the running executable, symlinks resolved.
    public static var executableDirectory: String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBufferPointer { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
        if n > 0 {
            return parent(of: String(decoding: buffer[..<n], as: UTF8.self))
        }
        guard let argument = CommandLine.arguments.first, let resolved = realpath(argument, nil) else { return nil }
        defer { free(resolved) }
        return parent(of: String(cString: resolved))
    }

    /// Whether `path` names a directory (following symlinks).
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// `/a/b/c` gives `/a/b`; `/a` gives `/`.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
