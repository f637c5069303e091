import KioskCore
import XCTest

/// The idle clock on a manual loop: dim, blank, wake, and which input is swallowed.
final class IdleMonitorTests: XCTestCase {
    func testDimsThenBlanksAndTheWakingInputIsReported() {
        let (loop, _) = MainLoop.manual()
        let monitor = IdleMonitor(loop: loop, settings: IdleSettings(dimAfter: 10, dimLevel: 0.3, blankAfter: 30))
        var changes: [String] = []
        monitor.onChange = { from, to, reason in changes.append("\(from.rawValue)>\(to.rawValue) \(reason)") }

        _ = loop.advanceTime(by: .seconds(9))
        XCTAssertEqual(monitor.state, .active)
        XCTAssertFalse(monitor.noteActivity(), "input on an active screen is not swallowed")
        _ = loop.advanceTime(by: .seconds(9.5))
        XCTAssertEqual(monitor.state, .active, "the input restarted the idle time")
        _ = loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(monitor.state, .dimmed)
        _ = loop.advanceTime(by: .seconds(20))
        XCTAssertEqual(monitor.state, .blanked)
        XCTAssertTrue(monitor.noteActivity(), "the input that wakes a blank screen is swallowed")
        XCTAssertEqual(monitor.state, .active)
        XCTAssertFalse(monitor.noteActivity())
        _ = loop.advanceTime(by: .seconds(10))
        XCTAssertEqual(monitor.state, .dimmed)
        XCTAssertTrue(monitor.noteActivity(), "the input that wakes a dimmed screen is swallowed too")
        XCTAssertEqual(changes, ["active>dimmed idle", "dimmed>blanked idle", "blanked>active input", "active>dimmed idle", "dimmed>active input"])
    }

    func testBlankOnlyAndWakeByRequest() {
        let (loop, _) = MainLoop.manual()
        let monitor = IdleMonitor(loop: loop, settings: IdleSettings(blankAfter: 5))
        var changes: [String] = []
        monitor.onChange = { from, to, reason in changes.append("\(to.rawValue) \(reason)") }
        _ = loop.advanceTime(by: .seconds(5))
        XCTAssertEqual(monitor.state, .blanked)
        monitor.wake(reason: "display.power")
        XCTAssertEqual(monitor.state, .active)
        monitor.blank(reason: "display.power")
        XCTAssertTrue(monitor.noteActivity(), "a screen blanked on request is woken by input, which is swallowed")
        XCTAssertEqual(changes, ["blanked idle", "active display.power", "blanked display.power", "active input"])
    }

    func testSettingsThatCannotWorkAreNamed() {
        XCTAssertThrowsError(try IdleSettings(dimAfter: 30, blankAfter: 10).validated()) {
            XCTAssertEqual("\($0)", "idle.blank_after 10.0 must come after idle.dim_after 30.0")
        }
        XCTAssertThrowsError(try IdleSettings(dimAfter: 10, dimLevel: 1.5).validated()) {
            XCTAssertEqual("\($0)", "idle.dim_level 1.5: must be between 0 and 1")
        }
        XCTAssertThrowsError(try IdleSettings(dimAfter: 0).validated()) {
            XCTAssertEqual("\($0)", "idle.dim_after 0.0: must be a positive number of seconds")
        }
    }
}
