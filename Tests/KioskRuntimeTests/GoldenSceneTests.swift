import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport
import KioskRuntime
import XCTest

/// Golden images of scenes rendered headless through the whole runtime (layout, layers, renders on the pool,
/// composition): one per widget kind, and the default scene. Compared with Tests/KioskRuntimeTests/Golden/*.png;
/// record with KIOSKD_RECORD_GOLDEN=1 (a recording run fails on purpose).
///
/// Tolerance: a channel may differ by up to 48 levels on up to 0.1 % of the pixels for scenes with text (font
/// versions and hinting move antialiased edges between machines; changing one letter of a label changes more than
/// that), and by 2 levels on no pixel at all for scenes of shapes alone.
final class GoldenSceneTests: XCTestCase {
    static let textTolerance: UInt8 = 48
    static let textFraction = 0.001
    static let shapeTolerance: UInt8 = 2

    static let logo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scenes/images/logo.png").path

    /// One widget kind on a 320x200 scene with a dark background.
    private func check(_ name: String, widgets: String, data: String = "", hasText: Bool = true, runFor: Duration? = nil,
                       prepare: ((StageHarness) throws -> Void)? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        // Widgets are written indented by two; the page's list needs six.
        let list = widgets.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")
        let yaml = "size: display\nbackground: \"#202830\"\nfont: {family: DejaVu Sans, size: 18}\n\(data)pages:\n  - name: p\n    widgets:\n\(list)\n"
        let h = try StageHarness(yaml: yaml, size: Size(width: 320, height: 200))
        try prepare?(h)
        if let runFor { h.run(for: runFor) }
        h.settle(file: file, line: line)
        let pixels = try h.screen()
        let result = GoldenImage.check(
            xrgb8888: pixels, size: Size(width: 320, height: 200), stride: 320 * 4,
            goldenPath: Self.golden(name), tolerance: hasText ? Self.textTolerance : Self.shapeTolerance,
            maxDifferingPixelsFraction: hasText ? Self.textFraction : 0)
        XCTAssertTrue(result.passed, "\(name): \(result.message)", file: file, line: line)
    }

    static func golden(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name).png").path
    }

    func testRect() throws {
        try check("rect", widgets: """
              - {type: rect, background: "#ff8000", x: 20, y: 20, width: 120, height: 80}
              - {type: rect, background: {gradient: ["#00c0ff", "#8000ff"], angle: 45}, corner_radius: 16, border: {width: 3, colour: white}, x: 160, y: 40, width: 140, height: 140}
            """, hasText: false)
    }

    func testPanel() throws {
        try check("panel", widgets: "  - {type: panel, x: 20, y: 20, width: 280, height: 160, opacity: 0.9}\n", hasText: false)
    }

    func testText() throws {
        try check("text", widgets: """
              - {type: text, text: "Hello <b>{name}</b>, the doors open at 9:00 and close at 18:00", markup: true, wrap: word, max_lines: 2, ellipsize: end, x: 10, y: 10, width: 300, height: 60, foreground: "#ffffff"}
              - {type: text, text: "centred", align: center, x: 10, y: 80, width: 300, height: 40, foreground: "#ffd040", font: {size: 28, weight: bold}}
              - {type: text, text: "shrinks to fit the box it is given", shrink_to_fit: true, x: 10, y: 130, width: 150, height: 30, foreground: "#a0ffa0"}
            """, data: "data: {name: kiosk}\n")
    }

    func testImage() throws {
        try check("image", widgets: """
              - {type: image, path: "\(Self.logo)", fit: contain, x: 10, y: 10, width: 140, height: 180}
              - {type: image, path: "\(Self.logo)", fit: cover, x: 170, y: 10, width: 140, height: 80}
              - {type: image, path: "\(Self.logo)", fit: fill, x: 170, y: 110, width: 140, height: 80}
            """, hasText: false)
    }

    func testClock() throws {
        try check("clock", widgets: """
              - {type: clock, format: "%H:%M:%S", timezone: UTC, x: 10, y: 10, width: 300, height: 80, foreground: white, font: {size: 48, weight: bold}}
              - {type: clock, format: "%A %d %B %Y", timezone: Asia/Tokyo, x: 10, y: 110, width: 300, height: 40, foreground: "#9fb3d9"}
            """)
    }

    func testTicker() throws {
        try check("ticker", widgets: """
              - {type: ticker, text: "Platform 4: the 10:42 is delayed · Lift B out of service", speed: 100, x: 20, y: 80, width: 280, height: 40, background: "#000000", foreground: white}
            """, runFor: .milliseconds(2000))
    }

    func testProgress() throws {
        try check("progress", widgets: """
              - {type: progress, value: 0.3, x: 20, y: 40, width: 280, height: 24, foreground: "#4cc2ff"}
              - {id: bound, type: progress, value: {bind: load, min: 0, max: 10}, x: 20, y: 120, width: 280, height: 24, foreground: "#ff4c4c", background: "#ffffff40"}
            """, data: "data: {load: \"7.5\"}\n", hasText: false)
    }

    func testQRCode() throws {
        try check("qrcode", widgets: """
              - {type: qrcode, text: "https://example.org/kiosk", x: 60, y: 0, width: 200, height: 200, background: white, foreground: black}
            """, hasText: false)
    }

    func testSparkline() throws {
        try check("sparkline", widgets: """
              - {id: s, type: sparkline, bind: temp, capacity: 20, x: 10, y: 20, width: 300, height: 160, foreground: "#4cff9c"}
            """, hasText: false) { h in
            for v in [3.0, 5, 4, 8, 6, 9, 7, 11, 10, 12] {
                try h.stage.setData(["temp": String(v)])
                h.settleNow()
            }
        }
    }

    func testButton() throws {
        try check("button", widgets: """
              - {id: b1, type: button, label: "Start", x: 20, y: 20, width: 130, height: 60}
              - {id: b2, type: button, label: "Pressed", x: 170, y: 20, width: 130, height: 60}
              - {id: b3, type: button, label: "Stop", enabled: false, x: 20, y: 110, width: 130, height: 60, background: "#d03030"}
            """) { h in
            try h.setWidget(id: "b2", properties: ["state": .string("pressed")])
        }
    }

    func testFPSOverlay() throws {
        try check("fps", widgets: "  - {type: fps, x: 10, y: 10, width: 160, height: 36}\n")
    }

    func testRowColumnAndStack() throws {
        try check("containers", widgets: """
              - type: row
                x: 10
                y: 10
                width: 300
                height: 80
                spacing: 10
                padding: 5
                background: "#ffffff20"
                children:
                  - {type: rect, background: "#ff0000", grow: 1}
                  - {type: rect, background: "#00ff00", grow: 2}
                  - {type: rect, background: "#0000ff", width: 40}
              - type: column
                x: 10
                y: 100
                width: 140
                height: 90
                spacing: 6
                align: center
                children:
                  - {type: rect, background: "#ffff00", width: 60, height: 20}
                  - {type: rect, background: "#00ffff", width: 100, grow: 1}
              - type: stack
                x: 170
                y: 100
                width: 140
                height: 90
                children:
                  - {type: rect, background: "#ff00ff"}
                  - {type: rect, background: "#ffffff", x: 25%, y: 25%, width: 50%, height: 50%}
            """, hasText: false)
    }

    /// The default scene on a 1024x768 panel, with its data, clocks at a fixed time and the ticker two seconds in.
    private func checkDefaultScene(rotation: OutputRotation, golden: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let path = try XCTUnwrap(BundledScenes.defaultScene, "the bundled default scene")
        let h = try StageHarness(path: path, size: Size(width: 1024, height: 768), rotation: rotation)
        h.run(for: .seconds(2))
        h.settle()
        let result = GoldenImage.check(xrgb8888: try h.screen(), size: Size(width: 1024, height: 768), stride: 1024 * 4,
                                       goldenPath: Self.golden(golden), tolerance: Self.textTolerance,
                                       maxDifferingPixelsFraction: Self.textFraction)
        XCTAssertTrue(result.passed, result.message, file: file, line: line)
    }

    func testDefaultScene() throws {
        try checkDefaultScene(rotation: .degrees0, golden: "default-scene-1024x768")
    }

    /// Turned a quarter clockwise (`rotation: 90`): laid out in portrait at 768x1024, its top along the panel's
    /// right edge.
    func testDefaultSceneRotated90() throws {
        try checkDefaultScene(rotation: .degrees90, golden: "default-scene-rotated-90")
    }

    /// The comparison catches a visibly different scene: the same scene with one card's value changed fails
    /// against the golden.
    func testAVisiblyDifferentSceneFailsTheComparison() throws {
        let path = try XCTUnwrap(BundledScenes.defaultScene)
        let h = try StageHarness(path: path)
        try h.stage.setData(["visitors": "9999"])
        h.run(for: .seconds(2))
        h.settle()
        let result = GoldenImage.check(xrgb8888: try h.screen(), size: Size(width: 1024, height: 768), stride: 1024 * 4,
                                       goldenPath: Self.golden("default-scene-1024x768"), tolerance: Self.textTolerance,
                                       maxDifferingPixelsFraction: Self.textFraction, record: false)
        XCTAssertFalse(result.passed, "a changed value must fail the golden comparison")
        XCTAssertGreaterThan(result.diff?.differingPixels ?? 0, 50, result.message)
    }
}
