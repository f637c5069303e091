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

/// The daemon's malloc arena limit, unless the environment sets one.
final class MallocArenasTests: XCTestCase {
    func testTheEnvironmentsLimitIsLeftAsItIs() {
        XCTAssertTrue(MallocArenas.isUnset { _ in nil })
        XCTAssertFalse(MallocArenas.isUnset { $0 == "MALLOC_ARENA_MAX" ? "4" : nil })
        XCTAssertFalse(MallocArenas.isUnset { $0 == "GLIBC_TUNABLES" ? "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=8" : nil })
        XCTAssertTrue(MallocArenas.isUnset { $0 == "GLIBC_TUNABLES" ? "glibc.malloc.tcache_count=0" : nil })
    }

    func testTheLimitIsSetOnlyWhenTheEnvironmentSetsNone() {
        // A fake mallopt: the test process's own allocator is left alone.
        var set: [Int32] = []
        XCTAssertFalse(MallocArenas.limitUnlessConfigured({ $0 == "MALLOC_ARENA_MAX" ? "1" : nil }, set: { set.append($0); return true }))
        XCTAssertEqual(set, [], "not set over the environment's")
        XCTAssertTrue(MallocArenas.limitUnlessConfigured({ _ in nil }, set: { set.append($0); return true }))
        XCTAssertEqual(set, [2])
        XCTAssertFalse(MallocArenas.limitUnlessConfigured({ _ in nil }, set: { _ in false }), "mallopt's refusal is reported")
    }
}
