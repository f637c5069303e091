import Glibc

/// Path names worked out as text, and whether a file exists, with the C library: what `URL(fileURLWithPath:)`,
/// `standardizedFileURL` and `FileManager.fileExists` give, without starting Foundation's URL parser and file
/// manager on the startup path (docs/design.md, "The process"). Lexical only: symlinks are not resolved, as
/// `standardizedFileURL` does not resolve them either. Stateless; any thread.
public enum PathNames {
    /// `path` made absolute against the current directory; unchanged when it already is.
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let directory = String(cString: cwd)
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    /// The folder a file is in, absolute: `scene.yaml` gives the current directory, `/a/b/c` gives `/a/b`.
    public static func directory(of path: String) -> String {
        let components = normalized(absolute(path)).split(separator: "/")
        return "/" + components.dropLast().joined(separator: "/")
    }

    /// An absolute path with `.` and empty components removed and each `..` taking away the one before it (never
    /// above `/`), and no trailing slash.
    public static func normalized(_ path: String) -> String {
        var kept: [Substring] = []
        for component in absolute(path).split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": if !kept.isEmpty { kept.removeLast() }
            default: kept.append(component)
            }
        }
        return "/" + kept.joined(separator: "/")
    }

    /// Whether something exists at `path`, following symlinks (a dangling link does not count).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Whether `path` is a directory, following symlinks.
    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
