import KioskCore
import XCTest

/// `--mode` text and how it picks among a connector's modes.
final class ModeRequestTests: XCTestCase {
    func testParsesSizeIntegerAndDecimalRefresh() throws {
        XCTAssertEqual(try ModeRequest(validating: "1024x768"), ModeRequest(width: 1024, height: 768))
        XCTAssertEqual(try ModeRequest(validating: "1920X1080@60"), ModeRequest(width: 1920, height: 1080, refreshHz: 60))
        XCTAssertEqual(try ModeRequest(validating: "1920x1080@59.94").refreshMilliHz, 59_940)
        XCTAssertEqual(try ModeRequest(validating: "1920x1080@59.9").refreshMilliHz, 59_900)
        XCTAssertEqual(try ModeRequest(validating: "1920x1080@23.976").refreshMilliHz, 23_976)
        XCTAssertEqual(try ModeRequest(validating: "1920x1080@59.94").description, "1920x1080@59.94")
        XCTAssertEqual(try ModeRequest(validating: "1920x1080@60").description, "1920x1080@60")
        XCTAssertEqual(try ModeRequest(validating: "1920x1080@59.900").description, "1920x1080@59.9")
    }

    func testInvalidTextSaysWhichPartIsWrong() {
        let cases: [(String, String)] = [
            ("", "mode '': no 'x' between width and height"),
            ("1024", "mode '1024': no 'x' between width and height"),
            ("x768", "mode 'x768': width '' is not a positive integer"),
            ("1024x", "mode '1024x': height '' is not a positive integer"),
            ("0x0", "mode '0x0': width '0' is not a positive integer"),
            ("-1x5", "mode '-1x5': width '-1' is not a positive integer"),
            ("axb", "mode 'axb': width 'a' is not a positive integer"),
            ("1024x768@", "mode '1024x768@': refresh '' is not a positive number"),
            ("1024x768@0", "mode '1024x768@0': refresh '0' is not a positive number"),
            ("1024x768@59.9401", "refresh '59.9401' is not a positive number of hertz with at most three decimals"),
            ("1024x768@59.", "refresh '59.' is not"),
            ("1024x768@.5", "refresh '.5' is not"),
            ("1024x768@-60", "refresh '-60' is not"),
            ("1024x768@60Hz", "refresh '60Hz' is not"),
            ("1024x768@60@1", "mode '1024x768@60@1': more than one '@'"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try ModeRequest(validating: text), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.contains(expected), "\(text): \(message)")
                XCTAssertTrue(message.contains("e.g. 1920x1080 or 1920x1080@59.94"), "\(text): \(message)")
            }
            XCTAssertNil(ModeRequest(parsing: text), text)
        }
    }

    private let modes = [
        OutputMode(width: 1920, height: 1080, refreshRate: 148_500_000 / (2200 * 1125.0), isPreferred: true),
        OutputMode(width: 1920, height: 1080, refreshRate: 148_352_000 / (2200 * 1125.0)),
        OutputMode(width: 1920, height: 1080, refreshRate: 50),
        OutputMode(width: 1920, height: 1200, refreshRate: 193_250_000 / (2592 * 1245.0)),
        OutputMode(width: 1920, height: 1200, refreshRate: 154_000_000 / (2080 * 1235.0)),
        OutputMode(width: 1280, height: 720, refreshRate: 59.94),
    ]

    private func pick(_ text: String) throws -> String? {
        modes.select(try ModeRequest(validating: text))?.exactDescription
    }

    func testPicksTheNearestExactRefresh() throws {
        XCTAssertEqual(try pick("1920x1080@59.94"), "1920x1080@59.94")
        XCTAssertEqual(try pick("1920x1080@60"), "1920x1080@60.00")
        XCTAssertEqual(try pick("1920x1080@50"), "1920x1080@50.00")
        XCTAssertEqual(try pick("1920x1200@59.88"), "1920x1200@59.88")
        XCTAssertEqual(try pick("1920x1200@59.95"), "1920x1200@59.95")
        XCTAssertEqual(try pick("1920x1200@60"), "1920x1200@59.95", "the nearer of 59.88 and 59.95")
        XCTAssertEqual(try pick("1280x720@60"), "1280x720@59.94", "an integer rate still takes a 59.94 mode")
    }

    func testWithoutRateTakesPreferredThenHighestAndFarRatesMatchNothing() throws {
        XCTAssertEqual(try pick("1920x1080"), "1920x1080@60.00")
        XCTAssertEqual(try pick("1920x1200"), "1920x1200@59.95")
        XCTAssertNil(try pick("1920x1080@30"), "no mode within a hertz of 30")
        XCTAssertNil(try pick("1920x1080@55"))
        XCTAssertNil(try pick("800x600"))
        XCTAssertEqual(modes.select(nil)?.exactDescription, "1920x1080@60.00")
        XCTAssertEqual(modes.distinctDescriptions.prefix(3), ["1920x1080@60.00", "1920x1080@59.94", "1920x1080@50.00"])
    }
}
