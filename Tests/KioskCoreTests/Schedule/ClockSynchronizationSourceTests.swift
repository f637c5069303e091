import Foundation
import KioskCore
import XCTest

/// The sources of `ClockSynchronization`: the flag file alone (for tests), and the system's, which a present
/// timesyncd flag makes synchronized whatever the kernel says.
final class ClockSynchronizationSourceTests: XCTestCase {
    func testFlagFileSaysSynchronizedOnlyWhileItExists() throws {
        let flag = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-clock-\(UUID().uuidString)")
        let source = ClockSynchronization.flagFile(flag.path)
        XCTAssertFalse(source.isSynchronized())
        try Data().write(to: flag)
        XCTAssertTrue(source.isSynchronized())
        XCTAssertTrue(ClockSynchronization.system(flagFile: flag.path).isSynchronized(), "timesyncd's flag is enough")
        try FileManager.default.removeItem(at: flag)
        XCTAssertFalse(source.isSynchronized())
    }
}
