import Foundation
import KioskCore
@testable import KioskRuntime
import XCTest

/// Data binding: `{key}` templates, numeric bindings, placeholders, and many keys landing in one frame.
final class DataBindingTests: XCTestCase {
    /// 100 text widgets, each bound to its own key, on a grid.
    static func hundredKeyScene() -> String {
        var yaml = "size: display\nbackground: \"#101010\"\nfont: {family: Sans, size: 12}\npages:\n  - name: main\n    widgets:\n"
        for i in 0..<100 {
            yaml += "      - {id: w\(i), type: text, text: \"k\(i)={k\(i)}\", x: \((i % 10) * 100), y: \((i / 10) * 70), width: 96, height: 60, foreground: white}\n"
        }
        return yaml
    }

    func testSettingAHundredKeysComposesExactlyOneFrame() throws {
        let h = try StageHarness(yaml: Self.hundredKeyScene())
        h.settle()
        XCTAssertEqual(try h.stage.widget(id: "w7")["shown_text"], .string("k7=–"), "a missing key shows the placeholder")
        let composedBefore = h.stats.framesComposed
        let presentedBefore = h.stats.framesPresented

        var values: [String: String] = [:]
        for i in 0..<100 { values["k\(i)"] = "v\(i)" }
        try h.stage.setData(values)
        h.settle()

        XCTAssertEqual(h.stats.framesComposed - composedBefore, 1, "100 keys set at once must compose exactly one frame")
        XCTAssertEqual(h.stats.framesPresented - presentedBefore, 1)
        for i in [0, 42, 99] {
            XCTAssertEqual(try h.stage.widget(id: "w\(i)")["shown_text"], .string("k\(i)=v\(i)"))
        }
        XCTAssertEqual(h.stage.data(keys: ["k3", "nope"]), ["k3": "v3"])
        XCTAssertEqual(h.stage.data(keys: nil).count, 100)
    }

    func testTheDataStoreIsBoundedAndRefusesWholeWhileExistingKeysKeepWorking() throws {
        let h = try StageHarness(yaml: Self.hundredKeyScene())
        h.stage.dataLimits.maximumKeys = 120
        var values: [String: String] = [:]
        for i in 0..<120 { values["k\(i)"] = "v" }
        try h.stage.setData(values)
        // One new key past the bound: refused whole, naming the bound; nothing of the request is set.
        XCTAssertThrowsError(try h.stage.setData(["k5": "changed", "extra": "x"])) { error in
            XCTAssertEqual((error as? StageError)?.code, .invalidArgument)
            XCTAssertEqual((error as? StageError)?.message,
                           "1 new key(s) would make 121, more than 120, the limit; the 120 keys set can still be changed")
        }
        XCTAssertEqual(h.stage.data(keys: ["k5", "extra"]), ["k5": "v"])
        // Keys already there still change.
        try h.stage.setData(["k5": "changed"])
        XCTAssertEqual(h.stage.data(keys: ["k5"]), ["k5": "changed"])
        let long = String(repeating: "k", count: 257)
        XCTAssertThrowsError(try h.stage.setData([long: "x"])) { error in
            XCTAssertEqual((error as? StageError)?.message, "key '\(long.prefix(32))…' is 257 bytes, more than 256, the limit")
        }
        XCTAssertThrowsError(try h.stage.setData(["k1": String(repeating: "v", count: 64 * 1024 + 1)])) { error in
            XCTAssertEqual((error as? StageError)?.message, "the value of 'k1' is 65537 bytes, more than 65536, the limit")
        }
        XCTAssertEqual(h.stage.data(keys: ["k1"]), ["k1": "v"])
    }

    func testSettingAnUnchangedValueDrawsNothing() throws {
        let h = try StageHarness(yaml: Self.hundredKeyScene())
        try h.stage.setData(["k1": "same"])
        h.settle()
        let composed = h.stats.framesComposed, started = h.stats.rendersStarted
        try h.stage.setData(["k1": "same"])
        h.settle()
        XCTAssertEqual(h.stats.framesComposed, composed)
        XCTAssertEqual(h.stats.rendersStarted, started)
    }

    func testProgressBindingMapsTheRangeAndEases() throws {
        let h = try StageHarness(yaml: """
            size: display
            pages:
              - name: p
                widgets:
                  - {id: bar, type: progress, value: {bind: load, min: 0, max: 200}, x: 0, y: 0, width: 400, height: 20, foreground: "#ff0000", background: "#000000"}
            """)
        h.settle()
        XCTAssertEqual(try h.stage.widget(id: "bar")["shown_value"], .number(0), "an unset key shows an empty bar")
        try h.stage.setData(["load": "100"])
        h.run(for: .milliseconds(100))
        guard case .number(let midway)? = try h.stage.widget(id: "bar")["shown_value"] else { return XCTFail("no value") }
        XCTAssertGreaterThan(midway, 0.05)
        XCTAssertLessThan(midway, 0.5)
        h.run(for: .milliseconds(500))
        XCTAssertEqual(try h.stage.widget(id: "bar")["shown_value"], .number(0.5))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 190, y: 10), 0xFF0000, "the fill covers the first half")
        XCTAssertEqual(try h.pixel(x: 210, y: 10), 0x000000, "the track shows past the value")
    }

    /// A bound progress value is read with the spaces and tabs around it trimmed, as `CharacterSet.whitespaces`
    /// trims them (Unicode's space separators and the tab), and nothing else.
    func testBoundProgressValuesAreTrimmedOfSpacesAsCharacterSetWhitespacesTrims() {
        for text in ["42", " 42 ", "\t42\t", "\u{00A0}42\u{3000}", "\u{2003} 4 2 \u{2009}", "42\n", "\r\n42", "", "   ", "\u{00A0}",
                     "x\u{200B}", "e\u{301} "] {
            XCTAssertEqual(String(SceneBuilder.trimmingSpaces(text)), text.trimmingCharacters(in: .whitespaces), text.debugDescription)
        }
    }

    func testSparklineAppendsEachValueWithinItsCapacity() throws {
        let h = try StageHarness(yaml: """
            size: display
            pages:
              - name: p
                widgets:
                  - {id: spark, type: sparkline, bind: temp, capacity: 3, x: 0, y: 0, width: 200, height: 50}
            """)
        for v in ["1", "2", "3", "4"] { try h.stage.setData(["temp": v]); h.settleNow() }
        XCTAssertEqual(try h.stage.widget(id: "spark")["values"], .array([.number(2), .number(3), .number(4)]))
        try h.stage.setData(["temp": "4"])
        XCTAssertEqual(try h.stage.widget(id: "spark")["values"], .array([.number(3), .number(4), .number(4)]),
                       "a repeated reading is still a new point of the series")
    }
}
