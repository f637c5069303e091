import Foundation
import KioskTestSupport
import XCTest
@testable import KioskCore

/// `RegularFile`: what a request names is opened only when it is a regular file, at once, never blocking.
final class RegularFileTests: XCTestCase {
    private var special: SpecialFiles!

    override func setUpWithError() throws {
        special = try SpecialFiles("regular-file")
    }

    override func tearDown() {
        special = nil
    }

    func testAFIFOAFolderASocketADeviceAndALinkToAFIFOAreRefusedPromptlyNamingPathAndKind() {
        for (path, kind) in special.all {
            let outcome = returnsPromptly { () -> Result<Int, RegularFileError> in
                Result { () throws(RegularFileError) in try RegularFile(opening: path).size }
            }
            guard let outcome else { XCTFail("opening \(path) (\(kind)) did not return within 5 s"); continue }
            XCTAssertThrowsError(try outcome.get(), path) { error in
                XCTAssertEqual("\(error)", "'\(path)' is \(kind), not a regular file")
            }
        }
    }

    func testNotFollowingLinksRefusesALinkAsALink() {
        let link = special.linkToFIFO
        let outcome = returnsPromptly { () -> Result<Int, RegularFileError> in
            Result { () throws(RegularFileError) in try RegularFile(opening: link, followLinks: false).size }
        }
        XCTAssertThrowsError(try XCTUnwrap(outcome, "returned within 5 s").get()) { error in
            XCTAssertEqual("\(error)", "'\(special.linkToFIFO)' is a symbolic link, not a regular file")
        }
    }

    func testARegularFileIsReadWithBlockingReadsAndAMissingOneIsNamed() throws {
        let path = special.folder + "/notes.txt"
        try Data("twelve bytes".utf8).write(to: URL(fileURLWithPath: path))
        let file = try RegularFile(opening: path)
        XCTAssertEqual(file.size, 12)
        XCTAssertEqual(fcntl(file.descriptor, F_GETFL) & O_NONBLOCK, 0, "O_NONBLOCK is cleared once the file is known to be regular")
        XCTAssertNotEqual(fcntl(file.descriptor, F_GETFD) & FD_CLOEXEC, 0)
        XCTAssertEqual(String(decoding: try file.contents(maximumBytes: 100), as: UTF8.self), "twelve bytes")
        XCTAssertEqual(try file.contents(maximumBytes: 5).count, 6, "one byte over the bound says the file is too large")
        XCTAssertEqual(try file.bytes(at: 7, count: 100), Array("bytes".utf8))

        let missing = special.folder + "/absent.png"
        XCTAssertThrowsError(try RegularFile(opening: missing)) { error in
            XCTAssertEqual((error as? RegularFileError)?.reason, .notFound(errno: ENOENT))
            XCTAssertEqual("\(error)", "'\(missing)': not found: ENOENT (No such file or directory)")
        }
    }

    func testTheImageHeaderReaderRefusesAFIFOPromptly() {
        let fifo = special.fifo
        let outcome = returnsPromptly { () -> String in
            do throws(ImageHeaderError) { _ = try ImageHeader.read(path: fifo); return "read" } catch { return error.description }
        }
        XCTAssertEqual(outcome, "is a FIFO, not a regular file")
    }
}
