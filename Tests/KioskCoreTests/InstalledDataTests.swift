import Foundation
import XCTest
@testable import KioskCore

/// Where an installed kioskd finds its data, from the kernel's path of the running executable.
final class InstalledDataTests: XCTestCase {
    func testTheExecutableDirectoryIsTheRunningBinarysFolderWithSymlinksResolved() throws {
        let directory = try XCTUnwrap(InstalledData.executableDirectory)
        let executable = try XCTUnwrap(realpath("/proc/self/exe", nil).map { p in defer { free(p) }; return String(cString: p) })
        XCTAssertEqual(directory, (executable as NSString).deletingLastPathComponent)
        XCTAssertTrue(InstalledData.isDirectory(directory))
    }

    func testParentsOfPaths() {
        XCTAssertEqual(InstalledData.parent(of: "/usr/bin/kioskd"), "/usr/bin")
        XCTAssertEqual(InstalledData.parent(of: "/usr/bin"), "/usr")
        XCTAssertEqual(InstalledData.parent(of: "/kioskd"), "/")
        XCTAssertEqual(InstalledData.parent(of: "kioskd"), ".")
    }

    func testOnlyDirectoriesCount() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-installed-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        XCTAssertTrue(InstalledData.isDirectory(folder.path))
        XCTAssertFalse(InstalledData.isDirectory(file.path))
        XCTAssertFalse(InstalledData.isDirectory(folder.appendingPathComponent("missing").path))
        // A build tree has no <prefix>/share/kioskd.
        XCTAssertNil(InstalledData.directory("kioskd-no-such-data-\(getpid())"))
    }
}
