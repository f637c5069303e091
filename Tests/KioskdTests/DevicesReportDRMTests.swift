import Foundation
import KioskTestSupport
import XCTest

/// `kioskd devices --properties` on vkms: what modetest shows, from kioskd.
final class DevicesReportDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    private func lines(_ text: String, matching pattern: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.range(of: pattern, options: .regularExpression) != nil }
    }

    /// The lines of one connector's entry: from its name to the next connector (or the CRTCs).
    private func connector(_ name: String, in text: String) -> String {
        let all = text.split(separator: "\n").map(String.init)
        guard let start = all.firstIndex(where: { $0.hasPrefix("    \(name) [id ") }) else { return "" }
        let end = all[(start + 1)...].firstIndex { !$0.hasPrefix("      ") } ?? all.endIndex
        return all[start..<end].joined(separator: "\n")
    }

    func testPropertiesListModesWithExactRefreshAndNamedProperties() throws {
        let r = try KioskdProcess.run(["devices", "--properties"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let out = r.stdout
        XCTAssertTrue(out.contains("driver vkms"), out)
        XCTAssertEqual(lines(out, matching: #"^    Virtual-1 \[id [0-9]+\]: connected"#).count, 1, out)

        // Every mode with its refresh to two decimals and its timings; vkms's preferred mode is DMT 1024x768@60.
        let modes = lines(out, matching: #"^        [0-9]+x[0-9]+@[0-9]+\.[0-9]{2}( \(preferred\))?: [0-9]+\.[0-9]{3} MHz, h "#)
        XCTAssertGreaterThan(modes.count, 5, out)
        XCTAssertEqual(lines(out, matching: #"^        1024x768@60\.00 \(preferred\): 65\.000 MHz, h 1024 1048 1184 1344, v 768 771 777 806"#).count,
                       1, out)
        // Two 1920x1200 modes that both round to 60 Hz are two entries.
        let virtual = connector("Virtual-1", in: out)
        XCTAssertEqual(lines(virtual, matching: #"^        1920x1200@59\.88: 193\.250 MHz"#).count, 1, virtual)
        XCTAssertEqual(lines(virtual, matching: #"^        1920x1200@59\.95: 154\.000 MHz"#).count, 1, virtual)
        XCTAssertEqual(lines(virtual, matching: #"^        DPMS \[id [0-9]+\]: On"#).count, 1, virtual)
        XCTAssertEqual(lines(out, matching: #"^    [0-9]+ \[index 0\]: active 1024x768@60\.00"#).count, 1, out)

        // Properties by name, with enum values by name, ranges with their range, objects and blobs by id.
        let property = #"^        %@ \[id [0-9]+\]: "#
        func has(_ name: String, _ value: String) {
            XCTAssertFalse(lines(out, matching: String(format: property, name) + value).isEmpty, "\(name): \(value) in\n\(out)")
        }
        has("DPMS", #"On \(enum: On, Standby, Suspend, Off\)"#)
        has("CRTC_ID", #"object [0-9]+$"#)
        has("ACTIVE", #"1 \(range 0\.\.1\)"#)
        has("MODE_ID", #"blob [0-9]+"#)
        has("type", #"Primary \(enum: Overlay, Primary, Cursor\), immutable"#)
        has("type", #"Cursor \(enum: Overlay, Primary, Cursor\), immutable"#)
        has("type", #"Overlay \(enum: Overlay, Primary, Cursor\), immutable"#)
        has("SRC_W", #"[0-9]+ \(range 0\.\.4294967295\)"#)
        has("IN_FORMATS", #"blob [0-9]+, immutable"#)
    }
}
