import Foundation
import XCTest
@testable import KioskCore

/// Path names as text (what URL's file paths give) and file existence with stat, off Foundation's startup path.
final class PathNamesTests: XCTestCase {
    private var cwd: String { FileManager.default.currentDirectoryPath }

    func testNormalizedPathsAreWhatStandardizedFileURLsGive() {
        for path in ["/a/b/../c", "/a/./b", "/a//b/", "/a/b/c/../../d", "/", "/a", "/a/..", "/a/b/.", "rel/../x",
                     "./x", "x/y/z", "images/../images/logo.png", "/etc/kioskd/../kioskd/scene.yaml"] {
            XCTAssertEqual(PathNames.normalized(path), URL(fileURLWithPath: path).standardizedFileURL.path, path)
        }
        // Above the root stays at the root.
        XCTAssertEqual(PathNames.normalized("/../a"), "/a")
    }

    func testAFilesFolderIsAbsolute() {
        XCTAssertEqual(PathNames.directory(of: "/etc/kioskd/scene.yaml"), "/etc/kioskd")
        XCTAssertEqual(PathNames.directory(of: "/scene.yaml"), "/")
        XCTAssertEqual(PathNames.directory(of: "scene.yaml"), PathNames.normalized(cwd))
        XCTAssertEqual(PathNames.directory(of: "scenes/a/../b/scene.yaml"), PathNames.normalized(cwd + "/scenes/b"))
        XCTAssertEqual(PathNames.absolute("x.yaml"), cwd + "/x.yaml")
        XCTAssertEqual(PathNames.absolute("/x.yaml"), "/x.yaml")
    }

    func testExistenceAndDirectoriesFollowSymlinks() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-paths-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/file", link = folder + "/link", dangling = folder + "/dangling", dirLink = folder + "/dir"
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        XCTAssertEqual(symlink(file, link), 0)
        XCTAssertEqual(symlink(folder + "/missing", dangling), 0)
        XCTAssertEqual(symlink(folder, dirLink), 0)
        for path in [folder, file, link, dangling, dirLink, folder + "/missing"] {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            XCTAssertEqual(PathNames.exists(path), exists, path)
            XCTAssertEqual(PathNames.isDirectory(path), exists && isDirectory.boolValue, path)
        }
    }
}
