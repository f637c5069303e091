import Foundation
import Glibc
import KioskControl
import KioskScene

/// Where `screenshot` may write a file on the server: one folder (`--screenshot-dir`, `control.screenshot_dir`,
/// default `/var/lib/kioskd/screenshots`) and what lies below it. A client of the control socket could otherwise
/// have kioskd overwrite any file its user may write. A plain value; main thread.
struct ScreenshotDirectory {
    static let defaultPath = KioskConfig.defaultScreenshotDirectory
    let path: String

    init(_ path: String = ScreenshotDirectory.defaultPath) {
        self.path = (path as NSString).standardizingPath
    }

    /// `given` when it names a file inside the folder; otherwise an `invalid_argument` naming both. `..` is
    /// resolved before the check, and so are symbolic links in the folders on the way (the file itself must
    /// not be one), so neither leads out of the folder.
    func check(_ given: String) throws -> String {
        let refuse = ControlError.invalidArgument("screenshot: 'path' must be inside the screenshot directory \(path), got '\(given)'")
        let standardized = (given as NSString).standardizingPath
        guard standardized.hasPrefix(path + "/"), standardized.count > path.count + 1 else { throw refuse }
        let parent = (standardized as NSString).deletingLastPathComponent
        // A folder that does not exist cannot hold a link out; writing into it fails with ENOENT, as it should.
        if let realParent = Self.realPath(parent), let realRoot = Self.realPath(path) {
            guard realParent == realRoot || realParent.hasPrefix(realRoot + "/") else { throw refuse }
        }
        var info = stat()
        if lstat(standardized, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK { throw refuse }
        return standardized
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
