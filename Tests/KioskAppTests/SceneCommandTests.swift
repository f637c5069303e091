import Foundation
@testable import KioskApp
import KioskTestSupport
import XCTest

/// The scene commands (`scene.get`, `scene.load`, `widget.get`/`widget.set`, `data.set`/`data.get`, `page.show`,
/// `animate`) of a kiosk in process, on its control socket as a client sends them (the real loop and render workers,
/// a scene file of two pages at 320x240): each command's reply, its events and each of its error paths.
/// (`KioskdTests.KioskctlSceneCommandTests` keeps kioskctl's subcommands for them.)
final class SceneCommandTests: XCTestCase {
    private var harness: KioskHarness!
    private var client: HarnessClient!
    private var sceneFile: URL { harness.directory.appendingPathComponent("scene.yaml") }

    /// A small scene with two pages, data bound into text and a progress bar, and a hundred bound keys.
    static func scene(title: String = "Hello") -> String {
        var yaml = """
        size: display
        background: black
        font: {family: Sans, size: 20}
        data:
          temperature: "21.5"
          level: "0.25"
        pages:
          - name: main
            widgets:
              - {id: title, type: text, text: "\(title)", x: 0, y: 0, width: 100%, height: 20%, foreground: white}
              - {id: reading, type: text, text: "{temperature} C", x: 0, y: 20%, width: 50%, height: 20%, foreground: white}
              - {id: bar, type: progress, value: {bind: level}, x: 0, y: 45%, width: 100%, height: 5%}
              - id: grid
                type: column
                x: 0
                y: 55%
                width: 100%
                height: 45%
                children:

        """
        for k in 0..<100 {
            yaml += "          - {id: cell\(k), type: text, text: \"{k\(k)}\", font: {size: 4}, foreground: white}\n"
        }
        yaml += """
          - name: second
            transition: {type: fade, duration: 0.2, easing: linear}
            widgets:
              - {id: other, type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#203040"}

        """
        return yaml
    }

    override func setUpWithError() throws {
        harness = try KioskHarness("scene-commands", scene: Self.scene(), manualClock: false)
        client = try harness.connect()
    }

    override func tearDown() {
        client = nil
        harness = nil
    }

    /// Writes `scene(title:)` as `name` in the test's folder.
    private func writeScene(_ name: String, title: String) throws -> URL {
        let url = harness.directory.appendingPathComponent(name)
        try Self.scene(title: title).write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// Each `(command, arguments, needle)` is refused as an invalid argument whose message contains the needle.
    private func assertInvalid(_ cases: [(String, String, String)], file: StaticString = #filePath, line: UInt = #line) throws {
        for (command, args, needle) in cases {
            let error = try client.error(command, args, file: file, line: line)
            XCTAssertEqual(error.code, "invalid_argument", "\(command) \(args)", file: file, line: line)
            XCTAssertTrue(error.message.contains(needle), "\(command) \(args): \(error.message)", file: file, line: line)
        }
    }

    func testSceneGetDescribesTheScene() throws {
        let scene = try client.result("scene.get")
        XCTAssertEqual(scene["source"] as? String, sceneFile.path)
        XCTAssertEqual(scene["pages"] as? [String], ["main", "second"])
        XCTAssertEqual(scene["current_page"] as? String, "main")
        let size = try XCTUnwrap(scene["size"] as? [String: Any])
        XCTAssertEqual(size["width"] as? Int, 320)
        XCTAssertEqual(size["height"] as? Int, 240)
        XCTAssertTrue((scene["data_keys"] as? [String] ?? []).contains("temperature"))
        let widgets = try XCTUnwrap(scene["widgets"] as? [[String: Any]])
        XCTAssertTrue(widgets.contains { $0["id"] as? String == "title" && $0["type"] as? String == "text" && $0["page"] as? String == "main" })
    }

    func testSceneLoadFromAFileAndInlineYAML() throws {
        let events = try harness.subscribe(["scene"])
        let other = try writeScene("other.yaml", title: "Other")
        let loaded = try client.result("scene.load", #"{"path": "\#(other.path)"}"#)
        XCTAssertEqual(loaded["source"] as? String, other.path)
        XCTAssertEqual(loaded["status"] as? String, "loading")
        // The new scene takes over once completely rendered, which the event announces.
        var event = try events.waitFor("scene")
        XCTAssertEqual(event["kind"] as? String, "loaded")
        XCTAssertEqual(event["source"] as? String, other.path)
        XCTAssertEqual(event["pages"] as? [String], ["main", "second"])
        XCTAssertEqual(try client.result("scene.get")["source"] as? String, other.path)
        XCTAssertEqual(try client.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Other")

        let inline = """
        {"id": 1, "cmd": "scene.load", "args": {"yaml": "size: display\\npages:\\n  - name: only\\n    widgets:\\n      - {id: t, type: text, text: Inline}\\n"}}
        """
        let reply = try client.request(inline)
        XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
        XCTAssertEqual((reply["result"] as? [String: Any])?["source"] as? String, "inline")
        event = try events.waitFor("scene")
        XCTAssertEqual(event["kind"] as? String, "loaded")
        XCTAssertEqual(event["source"] as? String, "inline")
        XCTAssertEqual(try client.result("scene.get")["pages"] as? [String], ["only"])
        XCTAssertEqual(try client.result("widget.get", #"{"id": "t"}"#)["text"] as? String, "Inline")
    }

    func testSceneLoadErrorsLeaveTheCurrentScene() throws {
        let bad = harness.directory.appendingPathComponent("bad.yaml")
        try "pages:\n  - name: p\n    widgets:\n      - {id: x, type: hologram}\n".write(to: bad, atomically: true, encoding: .utf8)
        let invalid = try client.error("scene.load", #"{"path": "\#(bad.path)"}"#)
        XCTAssertEqual(invalid.code, "invalid_scene")
        XCTAssertTrue(invalid.message.contains("bad.yaml") && invalid.message.contains("hologram"), invalid.message)

        let missing = try client.error("scene.load", #"{"path": "/nonexistent/scene.yaml"}"#)
        XCTAssertEqual(missing.code, "io_error")
        XCTAssertTrue(missing.message.contains("/nonexistent/scene.yaml"), missing.message)

        XCTAssertEqual(try client.error("scene.load", #"{"yaml": "pages: [1"}"#).code, "invalid_scene")

        try assertInvalid([(#"{"path": "scene.yaml"}"#, "absolute"), (#"{}"#, "missing 'path', 'yaml' or 'url'"),
                           (#"{"path": "/a.yaml", "yaml": "x"}"#, "not both"), (#"{"path": 3}"#, "'path' must be a string"),
                           (#"{"yaml": true}"#, "'yaml' must be a string"),
                           (#"{"yaml": "size: display", "base_directory": "rel"}"#, "'base_directory' must be an absolute path")]
            .map { ("scene.load", $0.0, $0.1) })
        XCTAssertEqual(try client.result("scene.get")["source"] as? String, sceneFile.path, "the scene on screen stayed")
    }

    func testWidgetGetAndSet() throws {
        let title = try client.result("widget.get", #"{"id": "title"}"#)
        XCTAssertEqual(title["id"] as? String, "title")
        XCTAssertEqual(title["type"] as? String, "text")
        XCTAssertEqual(title["page"] as? String, "main")
        XCTAssertEqual(title["text"] as? String, "Hello")
        let frame = try XCTUnwrap(title["frame"] as? [String: Any])
        XCTAssertEqual(frame["width"] as? Int, 320)

        let set = try client.result("widget.set", ##"{"id": "title", "props": {"text": "Changed", "foreground": "#ff0000"}}"##)
        XCTAssertEqual(set["text"] as? String, "Changed")
        XCTAssertEqual(try client.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Changed")

        XCTAssertEqual(try client.error("widget.get", #"{"id": "nope"}"#).code, "not_found")
        XCTAssertEqual(try client.error("widget.set", #"{"id": "nope", "props": {"text": "x"}}"#).code, "not_found")
        let badProperty = try client.error("widget.set", #"{"id": "title", "props": {"text": "ok", "wobble": 3}}"#)
        XCTAssertEqual(badProperty.code, "invalid_argument")
        XCTAssertTrue(badProperty.message.contains("wobble"), badProperty.message)
        XCTAssertEqual(try client.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Changed", "all checked before any applied")
        try assertInvalid([("widget.get", "{}", "missing 'id'"), ("widget.get", #"{"id": 4}"#, "'id' must be a string"),
                           ("widget.set", #"{"id": "title"}"#, "missing 'props'"),
                           ("widget.set", #"{"id": "title", "props": "text=x"}"#, "'props' must be an object"),
                           ("widget.set", #"{"id": "title", "props": {}}"#, "'props' must name at least one")])
    }

    func testDataSetAndGet() throws {
        let events = try harness.subscribe(["data"])
        let set = try client.result("data.set", #"{"values": {"temperature": 22, "level": 0.5, "flag": true, "label": "x"}}"#)
        XCTAssertEqual(set["set"] as? Int, 4)
        let values = try XCTUnwrap(try client.result("data.get", #"{"keys": ["temperature", "level", "flag", "label", "absent"]}"#)["values"] as? [String: String])
        XCTAssertEqual(values, ["temperature": "22", "level": "0.5", "flag": "true", "label": "x"], "numbers and booleans as strings; absent keys left out")
        XCTAssertEqual((try client.result("data.get")["values"] as? [String: String])?["temperature"], "22", "all keys without 'keys'")
        let event = try events.waitFor("data")
        XCTAssertEqual((event["values"] as? [String: String])?["temperature"], "22")

        try assertInvalid([("data.set", "{}", "missing 'values'"), ("data.set", #"{"values": [1]}"#, "'values' must be an object"),
                           ("data.set", #"{"values": {"a": [1]}}"#, "'values.a' must be a string, number or boolean"),
                           ("data.set", #"{"values": {"a": null}}"#, "'values.a'"),
                           ("data.get", #"{"keys": "a"}"#, "'keys' must be an array of strings"),
                           ("data.get", #"{"keys": [1]}"#, "'keys' must be an array of strings")])
    }

    /// Setting 100 bound keys in one call renders each bound widget once. On a scene already shown the widgets land
    /// one by one as they finish (a slow one holds back none of the others), coalesced per loop iteration: never
    /// more frames than renders.
    func testDataSetOfAHundredKeysRendersEachWidgetOnce() throws {
        let engine = harness.first.engine
        // Nothing animates in this scene: once the start-up renders have landed and flipped, the engine is idle.
        func settle(_ what: String) throws {
            try harness.waitUntil(what) { !engine.isRendering(engine.rootLayer) && engine.rendersInFlight == 0 && !engine.hasPendingWork }
        }
        try settle("the start-up frames to settle")
        let frames = try harness.subscribe(["frame"])
        let before = try client.result("stats")
        let composedBefore = try XCTUnwrap(before["frames_composed"] as? Int)
        let rendersBefore = try XCTUnwrap(before["renders_started"] as? Int)
        let values = (0..<100).map { #""k\#($0)": "v\#($0)""# }.joined(separator: ", ")
        XCTAssertEqual(try client.result("data.set", "{\"values\": {\(values)}}")["set"] as? Int, 100)
        try frames.waitFor("frame")
        try settle("every render of the new keys to land")
        let after = try client.result("stats")
        let composedAfter = try XCTUnwrap(after["frames_composed"] as? Int)
        let rendersAfter = try XCTUnwrap(after["renders_started"] as? Int)
        XCTAssertEqual(rendersAfter - rendersBefore, 100, "each bound widget rendered once")
        XCTAssertGreaterThanOrEqual(composedAfter - composedBefore, 1)
        XCTAssertLessThanOrEqual(composedAfter - composedBefore, 100, "frames coalesce: at most one per render")
        XCTAssertEqual(try client.result("data.get", #"{"keys": ["k0", "k99"]}"#)["values"] as? [String: String], ["k0": "v0", "k99": "v99"])
    }

    func testPageShow() throws {
        let events = try harness.subscribe(["scene"])
        XCTAssertEqual(try client.result("page.show", #"{"name": "second", "transition": {"kind": "fade", "duration": 0.1, "easing": "ease-out"}}"#)["page"] as? String, "second")
        let event = try events.waitFor("scene")
        XCTAssertEqual(event["kind"] as? String, "page_shown")
        XCTAssertEqual(event["page"] as? String, "second")
        XCTAssertEqual(try client.result("scene.get")["current_page"] as? String, "second")
        XCTAssertEqual(try client.result("page.show", #"{"name": "main"}"#)["page"] as? String, "main")
        XCTAssertEqual(try client.result("page.show", #"{"name": "second", "transition": {"kind": "slide-left", "easing": "cubic-bezier(0.2, 0, 0.2, 1)"}}"#)["page"] as? String, "second")

        XCTAssertEqual(try client.error("page.show", #"{"name": "nope"}"#).code, "not_found")
        try assertInvalid([("{}", "missing 'name'"), (#"{"name": 2}"#, "'name' must be a string"),
                           (#"{"name": "main", "transition": "fade"}"#, "'transition' must be an object"),
                           (#"{"name": "main", "transition": {}}"#, "missing 'transition.kind'"),
                           (#"{"name": "main", "transition": {"kind": "spin"}}"#, "'transition.kind' must be one of cut, fade, slide-left, slide-right"),
                           (#"{"name": "main", "transition": {"kind": "fade", "duration": -1}}"#, "'transition.duration'"),
                           (#"{"name": "main", "transition": {"kind": "fade", "duration": "1s"}}"#, "'transition.duration' must be a number"),
                           (#"{"name": "main", "transition": {"kind": "fade", "easing": "bouncy"}}"#, "'transition.easing'"),
                           (#"{"name": "main", "transition": {"kind": "fade", "easing": [2, 0, 0, 1]}}"#, "'transition.easing'")]
            .map { ("page.show", $0.0, $0.1) })
    }

    func testAnimateBasicSpringAndDecay() throws {
        XCTAssertEqual(try client.result("animate", #"{"id": "title", "property": "opacity", "to": 0.5, "duration": 0.2, "easing": "linear"}"#)["id"] as? String, "title")
        XCTAssertEqual(try client.result("animate", #"{"id": "title", "property": "position", "to": [10, 20], "kind": "spring", "stiffness": 200, "damping": 15}"#)["property"] as? String, "position")
        XCTAssertEqual(try client.result("animate", #"{"id": "title", "property": "x", "kind": "decay", "velocity": -300}"#)["property"] as? String, "x")
        XCTAssertEqual(try client.result("animate", #"{"id": "bar", "property": "value", "to": 0.9}"#)["id"] as? String, "bar")

        XCTAssertEqual(try client.error("animate", #"{"id": "nope", "property": "x", "to": 1}"#).code, "not_found")
        let badProperty = try client.error("animate", #"{"id": "title", "property": "wobble", "to": 1}"#)
        XCTAssertEqual(badProperty.code, "invalid_argument")
        XCTAssertTrue(badProperty.message.contains("wobble"), badProperty.message)
        try assertInvalid([(#"{"property": "x", "to": 1}"#, "missing 'id'"), (#"{"id": "title", "to": 1}"#, "missing 'property'"),
                           (#"{"id": "title", "property": "x"}"#, "missing 'to'"),
                           (#"{"id": "title", "property": "x", "to": "10"}"#, "'to' must be a number or a non-empty array of numbers"),
                           (#"{"id": "title", "property": "x", "to": []}"#, "'to' must be a number or a non-empty array"),
                           (#"{"id": "title", "property": "x", "to": 1, "kind": "wiggle"}"#, "'kind' must be basic, spring or decay"),
                           (#"{"id": "title", "property": "x", "to": 1, "duration": -2}"#, "'duration'"),
                           (#"{"id": "title", "property": "x", "to": 1, "kind": "spring", "stiffness": 0}"#, "'stiffness' must be greater than 0"),
                           (#"{"id": "title", "property": "x", "to": 1, "kind": "spring", "mass": "1"}"#, "'mass' must be a number"),
                           (#"{"id": "title", "property": "x", "kind": "decay"}"#, "missing 'velocity'"),
                           (#"{"id": "title", "property": "x", "kind": "decay", "velocity": 5, "deceleration": 1.5}"#, "'deceleration'")]
            .map { ("animate", $0.0, $0.1) })
    }
}
