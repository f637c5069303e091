import Foundation
import XCTest
@testable import KioskCore

/// `AtomicFile`: a file appears whole, readable by the group, or not at all.
final class AtomicFileTests: XCTestCase {
    private var folder: String!

    override func setUpWithError() throws {
        folder = "/tmp/kioskd-atomic-file-\(getpid())"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func names() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, path)
        return info.st_mode & 0o7777
    }

    func testTheFileIsWrittenWholeWithMode0640AndNoTemporaryFileStays() throws {
        let path = folder + "/shot.png"
        let previous = umask(0o077)
        defer { umask(previous) }
        try AtomicFile().write(Array(repeating: 7, count: 100_000), to: path)
        XCTAssertEqual(try names(), ["shot.png"])
        XCTAssertEqual(mode(path), 0o640, "group kioskd reads it, whatever the umask")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)).count, 100_000)

        try AtomicFile().write([1, 2, 3], to: path)
        XCTAssertEqual(try names(), ["shot.png"])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([1, 2, 3]), "a second write replaces the first")
    }

    func testAFailedWriteLeavesThePreviousFileAndNoPartialOne() throws {
        let path = folder + "/shot.png"
        try AtomicFile().write([1, 2, 3], to: path)
        // A disk that fills after the first 4 KiB.
        let fullDisk = AtomicFile { descriptor, bytes in
            var info = stat()
            fstat(descriptor, &info)
            guard info.st_size < 4096 else { errno = ENOSPC; return -1 }
            return Glibc.write(descriptor, bytes.baseAddress, min(bytes.count, 4096))
        }
        XCTAssertThrowsError(try fullDisk.write(Array(repeating: 9, count: 100_000), to: path)) { error in
            XCTAssertEqual("\(error)", "'\(path)': write: ENOSPC (No space left on device)")
        }
        XCTAssertEqual(try names(), ["shot.png"], "the temporary file is removed")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data([1, 2, 3]), "the previous file is untouched")
    }

    func testARealFullFileSystemLeavesNoFileAtTheName() throws {
        let small = folder + "/small"
        try FileManager.default.createDirectory(atPath: small, withIntermediateDirectories: true)
        guard mount("tmpfs", small, "tmpfs", 0, "size=64k") == 0 else {
            throw XCTSkip("cannot mount a 64 KiB tmpfs at \(small) (errno \(errno)); the injected failure above covers it")
        }
        defer { umount(small) }
        let path = small + "/shot.png"
        XCTAssertThrowsError(try AtomicFile().write(Array(repeating: 5, count: 1 << 20), to: path)) { error in
            XCTAssertEqual((error as? FileWriteError)?.errno, ENOSPC, "\(error)")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: small), [], "neither the name nor a temporary file")
    }

    func testAnUnwritableFolderNamesThePathAndErrno() throws {
        let path = folder + "/missing/shot.png"
        XCTAssertThrowsError(try AtomicFile().write([1], to: path)) { error in
            XCTAssertTrue("\(error)".hasPrefix("'\(path)': create \(folder!)/missing/.shot.png."), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("ENOENT (No such file or directory)"), "\(error)")
        }
    }

    func testALinkPlantedAtTheNameIsReplacedNotWrittenThrough() throws {
        let target = folder + "/elsewhere"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: target))
        let path = folder + "/shot.png"
        XCTAssertEqual(symlink(target, path), 0)
        try AtomicFile().write([1, 2], to: path)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data("keep".utf8))
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, "the name is now the new regular file")
    }
}
