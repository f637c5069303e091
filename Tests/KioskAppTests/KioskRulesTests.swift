@testable import KioskApp
import KioskCore
import KioskDisplay
import KioskInput
import KioskScene
import XCTest

/// Product rules of the run that are pure functions: which input devices a configuration uses, and where a page
/// capture is written.
final class KioskRulesTests: XCTestCase {
    func testInputComesFromTheDevicesOrSeatGivenElseSeat0WithADisplayAndNoneHeadless() {
        var configuration = KioskConfiguration()
        XCTAssertEqual(InputSettings(configuration, backend: .drm).source, .seat("seat0"))
        XCTAssertNil(InputSettings(configuration, backend: .headless).source, "a headless run reads no input unless told")
        configuration.settings.input.seat = "seat1"
        XCTAssertEqual(InputSettings(configuration, backend: .headless).source, .seat("seat1"))
        configuration.settings.input.seat = "none"
        XCTAssertNil(InputSettings(configuration, backend: .drm).source)
        configuration.settings.input.devices = ["/dev/input/event2"]
        configuration.settings.input.seat = nil
        XCTAssertEqual(InputSettings(configuration, backend: .drm).source, .paths(["/dev/input/event2"]))
    }

    func testIdleDimsToAFifthUnlessToldAndTheBoardsBacklightIsUsed() {
        var configuration = KioskConfiguration(backlight: "rpi_backlight")
        configuration.settings.idle.dimAfter = 30
        let settings = InputSettings(configuration, backend: .drm)
        XCTAssertEqual(settings.idle.dimAfter, 30)
        XCTAssertEqual(settings.idle.dimLevel, 0.2)
        XCTAssertEqual(settings.backlightName, "rpi_backlight")
        XCTAssertEqual(settings.backlightDirectory, Backlight.systemClassDirectory)
    }

    func testAPageCaptureIsNamedAfterItsNumberAndPageInItsOutputsFolder() {
        XCTAssertEqual(PageCaptures.fileName(number: 7, page: "main"), "0007-main.png")
        XCTAssertEqual(PageCaptures.fileName(number: 12, page: "Menü du jour/2"), "0012-Men__du_jour_2.png")
        XCTAssertEqual(PageCaptures.fileName(output: "HDMI-A-1"), "HDMI-A-1")
        XCTAssertEqual(PageCaptures.fileName(output: "../x"), ".._x", "no folder outside DIR")
    }
}
