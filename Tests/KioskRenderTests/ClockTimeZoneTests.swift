import CQREncode
import Dispatch
import KioskCore
import KioskRender
import XCTest

final class ClockTimeZoneTests: XCTestCase {
    // 2025-01-15 12:00:00 UTC (winter in the north) and 2025-07-15 12:00:00 UTC (summer).
    private let january = 1_736_942_400, july = 1_752_580_800

    func testNamedZonesGiveTheirWallTimeOffsetAndAbbreviation() {
        XCTAssertEqual(ClockContent.format(time: january, format: "%Y-%m-%d %H:%M %z", timeZone: .named("Asia/Tokyo")),
                       "2025-01-15 21:00 +0900")
        XCTAssertEqual(ClockContent.format(time: january, format: "%H:%M %z %Z", timeZone: .named("UTC")),
                       "12:00 +0000 GMT", "Foundation names UTC GMT")
        XCTAssertEqual(ClockContent.format(time: january, format: "%H:%M %z", timeZone: .named("America/New_York")),
                       "07:00 -0500")
        XCTAssertEqual(ClockContent.format(time: july, format: "%H:%M %z", timeZone: .named("America/New_York")),
                       "08:00 -0400", "daylight saving time")
        XCTAssertEqual(ClockContent.format(time: july, format: "%a %d %b", timeZone: .named("Pacific/Kiritimati")),
                       "Wed 16 Jul", "+14:00 crosses the date line")
        let tokyoZone = ClockContent.format(time: january, format: "%Z", timeZone: .named("Asia/Tokyo"))
        XCTAssertFalse(tokyoZone.isEmpty)
        XCTAssertNotEqual(tokyoZone, "GMT", "%Z is the zone's own abbreviation, not gmtime's")
        XCTAssertEqual(ClockContent.format(time: january, format: "%H", timeZone: .named("Not/AZone")), "")
    }

    func testNamedZonesAreCorrectOnManyThreadsAtOnce() {
        let zones = ["Asia/Tokyo": "21:00", "UTC": "12:00", "Europe/Berlin": "13:00", "America/Los_Angeles": "04:00"]
        let names = Array(zones.keys)
        let wrong = Lock([String]())
        let january = self.january
        DispatchQueue.concurrentPerform(iterations: 200) { i in
            let zone = names[i % names.count]
            let text = ClockContent.format(time: january, format: "%H:%M", timeZone: .named(zone))
            if text != zones[zone] { wrong.withLock { $0.append("\(zone): \(text)") } }
        }
        XCTAssertEqual(wrong.withLock { $0 }, [])
    }

    func testClockContentDrawsANamedZonesTime() throws {
        let tokyo = ClockContent(time: january, format: "%H:%M", timeZone: .named("Asia/Tokyo"), font: "Sans Bold 32")
        let utc = ClockContent(time: january, format: "%H:%M", timeZone: .named("UTC"), font: "Sans Bold 32")
        XCTAssertEqual(tokyo.text, "21:00")
        XCTAssertEqual(utc.text, "12:00")
        let a = try render(tokyo, size: Size(width: 160, height: 48)), b = try render(utc, size: Size(width: 160, height: 48))
        XCTAssertGreaterThan(a.coverage.count, 100)
        XCTAssertNotEqual(Array(UnsafeRawBufferPointer(start: a.bytes, count: a.byteCount)),
                          Array(UnsafeRawBufferPointer(start: b.bytes, count: b.byteCount)))
    }
}
