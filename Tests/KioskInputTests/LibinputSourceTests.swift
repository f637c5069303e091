import Glibc
import KioskCore
@testable import KioskInput
import XCTest

/// What of libinput runs on a host without input devices: the path backend's errors and the key names. The
/// devices themselves are exercised in the VM (KioskdTests.InputDRMTests).
final class LibinputSourceTests: XCTestCase {
    func testAMissingDevicePathIsNamedWithItsErrno() throws {
        let loop = try MainLoop.epoll()
        XCTAssertThrowsError(try LibinputSource(loop: loop, backend: .paths(["/nonexistent/event9"]))) { error in
            XCTAssertEqual("\(error)", "input device /nonexistent/event9: ENOENT (No such file or directory)")
        }
    }

    func testARegularFileIsNotAnInputDevice() throws {
        let loop = try MainLoop.epoll()
        let path = "/tmp/kioskd-not-an-input-\(getpid())"
        XCTAssertTrue(FileManagerLite.write(path))
        defer { unlink(path) }
        XCTAssertThrowsError(try LibinputSource(loop: loop, backend: .paths([path]))) { error in
            XCTAssertEqual("\(error)", "input device \(path): not an input device libinput can use")
        }
    }

    func testKeyNamesComeFromTheKernelTable() {
        XCTAssertEqual(KeyNames.name(of: 15), "tab")
        XCTAssertEqual(KeyNames.name(of: 28), "enter")
        XCTAssertEqual(KeyNames.name(of: 57), "space")
        XCTAssertEqual(KeyNames.name(of: 42), "leftshift")
        XCTAssertEqual(KeyNames.name(of: 0x110), "btn_left")
    }
}

/// Writes a small file without Foundation.
enum FileManagerLite {
    static func write(_ path: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return Glibc.write(fd, "x", 1) == 1
    }
}
