import Foundation
import KioskCore
import KioskRuntime
import XCTest

/// Live reload: a valid new version replaces the scene whole, at a frame boundary; each kind of invalid version
/// leaves the previous scene on screen and says what is wrong.
final class LiveReloadTests: XCTestCase {
    static let good = """
        size: display
        pages:
          - name: main
            widgets:
              - {id: box, type: rect, background: "#ff0000", x: 0, y: 0, width: 100, height: 100}
              - {id: label, type: text, text: "hello", x: 0, y: 120, width: 300, height: 40}
        """

    func testAValidNewVersionReplacesTheSceneCompletely() throws {
        let h = try StageHarness(yaml: Self.good)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0xFF0000)
        let events = EventLog()
        h.listeners.append(h.stage.addEventListener { events.append($0) })
        try Data("""
            size: display
            pages:
              - name: main
                widgets:
                  - {id: other, type: rect, background: "#00ff00", x: 0, y: 0, width: 100, height: 100}
            """.utf8).write(to: URL(fileURLWithPath: h.scenePath))
        XCTAssertTrue(h.reload())
        // Until the new scene has rendered, the old one stays whole on screen.
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0xFF0000)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0x00FF00)
        XCTAssertThrowsError(try h.stage.widget(id: "box"))
        XCTAssertNoThrow(try h.stage.widget(id: "other"))
        XCTAssertEqual(events.items, [.sceneLoaded(source: h.scenePath, pages: ["main"])])
    }

    /// Each bad version, and the words its error must contain.
    static func badVersions(in dir: URL) throws -> [(name: String, data: Data, expect: String)] {
        let garbage = dir.appendingPathComponent("garbage.png")
        try Data("this is not a picture".utf8).write(to: garbage)
        func scene(_ widget: String) -> Data {
            Data("size: display\npages:\n  - name: main\n    widgets:\n      - \(widget)\n".utf8)
        }
        var deep = "size: display\npages:\n  - name: main\n    widgets:\n"
        var indent = "      "
        for _ in 0..<40 {
            deep += "\(indent)- type: stack\n\(indent)  children:\n"
            indent += "    "
        }
        deep += "\(indent)- {type: rect}\n"
        var big = "size: display\n# " + String(repeating: "x", count: 5 * 1024 * 1024) + "\npages: []\n"
        big += ""
        return [
            ("unknown widget", scene("{type: sprocket}"), "sprocket"),
            ("duplicate id", Data("size: display\npages:\n  - name: main\n    widgets:\n      - {id: a, type: rect}\n      - {id: a, type: rect}\n".utf8), "duplicate"),
            ("wrong type", scene("{type: text, text: hi, font: {size: large}}"), "font.size"),
            ("bad colour", scene("{type: rect, background: \"#12345\"}"), "background"),
            ("missing image", scene("{type: image, path: nowhere.png}"), "nowhere.png"),
            ("unreadable image", scene("{type: image, path: garbage.png}"), "garbage.png"),
            ("bad binding", scene("{type: text, text: \"{unclosed\"}"), "never closed"),
            ("not UTF-8", Data([0x73, 0x69, 0x7A, 0x65, 0x3A, 0x20, 0xFF, 0xFE, 0x0A]), "UTF-8"),
            ("over-size", Data(big.utf8), "the limit is"),
            ("too deep", Data(deep.utf8), "deep"),
            ("not YAML", Data("pages: [unclosed\n".utf8), "scene.yaml:"),
        ]
    }

    func testEachKindOfInvalidVersionLeavesThePreviousSceneOnScreen() throws {
        let h = try StageHarness(yaml: Self.good)
        h.settle()
        let before = try h.screen()
        let events = EventLog()
        h.listeners.append(h.stage.addEventListener { events.append($0) })
        for bad in try Self.badVersions(in: h.directory) {
            try bad.data.write(to: URL(fileURLWithPath: h.scenePath))
            XCTAssertFalse(h.reload(), bad.name)
            h.settle()
            XCTAssertEqual(try h.screen(), before, "\(bad.name): the previous scene must stay on screen")
            XCTAssertNoThrow(try h.stage.widget(id: "box"), bad.name)
            guard case .error(let code, let message)? = events.items.last else {
                XCTFail("\(bad.name): no error event")
                continue
            }
            XCTAssertEqual(code, "invalid_scene", bad.name)
            XCTAssertTrue(message.contains(bad.expect), "\(bad.name): \(message.prefix(300))")
            XCTAssertTrue(message.contains("scene.yaml:"), "\(bad.name): the error names the file and line: \(message.prefix(300))")
        }
        XCTAssertEqual(events.items.count, 11)
    }

    func testAnUnknownFontIsAcceptedWithAWarning() throws {
        let h = try StageHarness(yaml: Self.good)
        h.settle()
        try Data("""
            size: display
            pages:
              - name: main
                widgets:
                  - {id: fancy, type: text, text: "fallback", font: {family: "No Such Font Family 42"}, x: 0, y: 0, width: 300, height: 40}
            """.utf8).write(to: URL(fileURLWithPath: h.scenePath))
        XCTAssertTrue(h.reload())
        h.settle()
        XCTAssertNoThrow(try h.stage.widget(id: "fancy"))
    }
}

/// Collects stage events. Main thread.
final class EventLog {
    private(set) var items: [StageEvent] = []
    func append(_ event: StageEvent) { items.append(event) }
}
