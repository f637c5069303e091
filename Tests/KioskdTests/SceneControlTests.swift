import Foundation
import KioskTestSupport
import XCTest

/// A small scene with two pages, data bound into text and a progress bar, and a hundred bound keys.
private func writeScene(_ directory: URL, name: String = "scene.yaml", title: String = "Hello") throws -> URL {
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
    let url = directory.appendingPathComponent(name)
    try yaml.write(to: url, atomically: true, encoding: .utf8)
    return url
}

/// The scene commands end to end on a headless `kioskd run --scene FILE`, with each error path.
final class SceneControlTests: XCTestCase {
    private var daemon: ControlledKioskd!
    private var directory: URL!
    private var sceneFile: URL!

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("scene-control-\(name.filter { $0.isLetter })")
        sceneFile = try writeScene(directory)
    }

    /// Started by each test rather than in setUp, so a daemon that does not come up fails the test instead of
    /// being reported as a skip.
    private func startDaemon() throws {
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", sceneFile.path])
    }

    override func tearDownWithError() throws {
        daemon?.stop()
        daemon = nil
    }

    func testSceneGetDescribesTheScene() throws {
        try startDaemon()
        let scene = try daemon.result("scene.get")
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
        try startDaemon()
        let events = try ControlEventStream(daemon, events: ["scene"])
        let other = try writeScene(directory, name: "other.yaml", title: "Other")
        let loaded = try daemon.result("scene.load", #"{"path": "\#(other.path)"}"#)
        XCTAssertEqual(loaded["source"] as? String, other.path)
        XCTAssertEqual(loaded["status"] as? String, "loading")
        // The new scene takes over once completely rendered, which the event announces.
        var event = try events.waitFor("a 'scene' event") { $0.name == "scene" }
        XCTAssertEqual(event.string("kind"), "loaded")
        XCTAssertEqual(event.string("source"), other.path)
        XCTAssertEqual(event["pages"] as? [String], ["main", "second"])
        XCTAssertEqual(try daemon.result("scene.get")["source"] as? String, other.path)
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Other")

        let inline = """
        {"id": 1, "cmd": "scene.load", "args": {"yaml": "size: display\\npages:\\n  - name: only\\n    widgets:\\n      - {id: t, type: text, text: Inline}\\n"}}
        """
        let reply = try daemon.request(inline)
        XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
        XCTAssertEqual((reply["result"] as? [String: Any])?["source"] as? String, "inline")
        event = try events.waitFor("a 'scene' event") { $0.name == "scene" }
        XCTAssertEqual(event.string("kind"), "loaded")
        XCTAssertEqual(event.string("source"), "inline")
        XCTAssertEqual(try daemon.result("scene.get")["pages"] as? [String], ["only"])
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "t"}"#)["text"] as? String, "Inline")
    }

    func testSceneLoadErrorsLeaveTheCurrentScene() throws {
        try startDaemon()
        let bad = directory.appendingPathComponent("bad.yaml")
        try "pages:\n  - name: p\n    widgets:\n      - {id: x, type: hologram}\n".write(to: bad, atomically: true, encoding: .utf8)
        let invalid = try daemon.error("scene.load", #"{"path": "\#(bad.path)"}"#)
        XCTAssertEqual(invalid.code, "invalid_scene")
        XCTAssertTrue(invalid.message.contains("bad.yaml") && invalid.message.contains("hologram"), invalid.message)

        let missing = try daemon.error("scene.load", #"{"path": "/nonexistent/scene.yaml"}"#)
        XCTAssertEqual(missing.code, "io_error")
        XCTAssertTrue(missing.message.contains("/nonexistent/scene.yaml"), missing.message)

        let badYAML = try daemon.error("scene.load", #"{"yaml": "pages: [1"}"#)
        XCTAssertEqual(badYAML.code, "invalid_scene")

        for (args, needle) in [(#"{"path": "scene.yaml"}"#, "absolute"), (#"{}"#, "missing 'path', 'yaml' or 'url'"),
                               (#"{"path": "/a.yaml", "yaml": "x"}"#, "not both"), (#"{"path": 3}"#, "'path' must be a string"),
                               (#"{"yaml": true}"#, "'yaml' must be a string"),
                               (#"{"yaml": "size: display", "base_directory": "rel"}"#, "'base_directory' must be an absolute path")] {
            let error = try daemon.error("scene.load", args)
            XCTAssertEqual(error.code, "invalid_argument", args)
            XCTAssertTrue(error.message.contains(needle), "\(args): \(error.message)")
        }
        XCTAssertEqual(try daemon.result("scene.get")["source"] as? String, sceneFile.path, "the scene on screen stayed")
    }

    func testWidgetGetAndSet() throws {
        try startDaemon()
        let title = try daemon.result("widget.get", #"{"id": "title"}"#)
        XCTAssertEqual(title["id"] as? String, "title")
        XCTAssertEqual(title["type"] as? String, "text")
        XCTAssertEqual(title["page"] as? String, "main")
        XCTAssertEqual(title["text"] as? String, "Hello")
        let frame = try XCTUnwrap(title["frame"] as? [String: Any])
        XCTAssertEqual(frame["width"] as? Int, 320)

        let set = try daemon.result("widget.set", ##"{"id": "title", "props": {"text": "Changed", "foreground": "#ff0000"}}"##)
        XCTAssertEqual(set["text"] as? String, "Changed")
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Changed")

        XCTAssertEqual(try daemon.error("widget.get", #"{"id": "nope"}"#).code, "not_found")
        XCTAssertEqual(try daemon.error("widget.set", #"{"id": "nope", "props": {"text": "x"}}"#).code, "not_found")
        let badProperty = try daemon.error("widget.set", #"{"id": "title", "props": {"text": "ok", "wobble": 3}}"#)
        XCTAssertEqual(badProperty.code, "invalid_argument")
        XCTAssertTrue(badProperty.message.contains("wobble"), badProperty.message)
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Changed", "all checked before any applied")
        for (command, args, needle) in [("widget.get", "{}", "missing 'id'"), ("widget.get", #"{"id": 4}"#, "'id' must be a string"),
                                        ("widget.set", #"{"id": "title"}"#, "missing 'props'"),
                                        ("widget.set", #"{"id": "title", "props": "text=x"}"#, "'props' must be an object"),
                                        ("widget.set", #"{"id": "title", "props": {}}"#, "'props' must name at least one")] {
            let error = try daemon.error(command, args)
            XCTAssertEqual(error.code, "invalid_argument", args)
            XCTAssertTrue(error.message.contains(needle), "\(args): \(error.message)")
        }
    }

    func testDataSetAndGet() throws {
        try startDaemon()
        let events = try ControlEventStream(daemon, events: ["data"])
        let set = try daemon.result("data.set", #"{"values": {"temperature": 22, "level": 0.5, "flag": true, "label": "x"}}"#)
        XCTAssertEqual(set["set"] as? Int, 4)
        let values = try XCTUnwrap(try daemon.result("data.get", #"{"keys": ["temperature", "level", "flag", "label", "absent"]}"#)["values"] as? [String: String])
        XCTAssertEqual(values, ["temperature": "22", "level": "0.5", "flag": "true", "label": "x"], "numbers and booleans as strings; absent keys left out")
        XCTAssertEqual((try daemon.result("data.get")["values"] as? [String: String])?["temperature"], "22", "all keys without 'keys'")
        let event = try events.waitFor("a 'data' event") { $0.name == "data" }
        XCTAssertEqual((event["values"] as? [String: String])?["temperature"], "22")

        for (command, args, needle) in [("data.set", "{}", "missing 'values'"), ("data.set", #"{"values": [1]}"#, "'values' must be an object"),
                                        ("data.set", #"{"values": {"a": [1]}}"#, "'values.a' must be a string, number or boolean"),
                                        ("data.set", #"{"values": {"a": null}}"#, "'values.a'"),
                                        ("data.get", #"{"keys": "a"}"#, "'keys' must be an array of strings"),
                                        ("data.get", #"{"keys": [1]}"#, "'keys' must be an array of strings")] {
            let error = try daemon.error(command, args)
            XCTAssertEqual(error.code, "invalid_argument", args)
            XCTAssertTrue(error.message.contains(needle), "\(args): \(error.message)")
        }
    }

    /// Setting 100 bound keys in one call renders each bound widget once. On a scene already shown the widgets land
    /// one by one as they finish (a slow one holds back none of the others), coalesced per loop iteration: never
    /// more frames than renders.
    func testDataSetOfAHundredKeysRendersEachWidgetOnce() throws {
        try startDaemon()
        let frames = try ControlEventStream(daemon, events: ["frame"])
        // Let the start-up frames settle: nothing animates in this scene.
        try frames.waitForQuiet("'frame' events", quiet: 0.3) { $0.name == "frame" }
        let composedBefore = try XCTUnwrap(try frames.stats()["frames_composed"] as? Int)
        let rendersBefore = try XCTUnwrap(try frames.stats()["renders_started"] as? Int)
        let values = (0..<100).map { #""k\#($0)": "v\#($0)""# }.joined(separator: ", ")
        XCTAssertEqual(try daemon.result("data.set", "{\"values\": {\(values)}}")["set"] as? Int, 100)
        try frames.waitFor("the first frame showing the new keys", timeout: 10) { $0.name == "frame" }
        try frames.waitForQuiet("more 'frame' events", quiet: 0.5) { $0.name == "frame" }
        let composedAfter = try XCTUnwrap(try frames.stats()["frames_composed"] as? Int)
        let rendersAfter = try XCTUnwrap(try frames.stats()["renders_started"] as? Int)
        XCTAssertEqual(rendersAfter - rendersBefore, 100, "each bound widget rendered once")
        XCTAssertGreaterThanOrEqual(composedAfter - composedBefore, 1)
        XCTAssertLessThanOrEqual(composedAfter - composedBefore, 100, "frames coalesce: at most one per render")
        XCTAssertEqual((try daemon.result("data.get", #"{"keys": ["k0", "k99"]}"#)["values"] as? [String: String]), ["k0": "v0", "k99": "v99"])
    }

    func testPageShow() throws {
        try startDaemon()
        let events = try ControlEventStream(daemon, events: ["scene"])
        XCTAssertEqual(try daemon.result("page.show", #"{"name": "second", "transition": {"kind": "fade", "duration": 0.1, "easing": "ease-out"}}"#)["page"] as? String, "second")
        let event = try events.waitFor("a 'scene' event") { $0.name == "scene" }
        XCTAssertEqual(event.string("kind"), "page_shown")
        XCTAssertEqual(event.string("page"), "second")
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "second")
        XCTAssertEqual(try daemon.result("page.show", #"{"name": "main"}"#)["page"] as? String, "main")
        XCTAssertEqual(try daemon.result("page.show", #"{"name": "second", "transition": {"kind": "slide-left", "easing": "cubic-bezier(0.2, 0, 0.2, 1)"}}"#)["page"] as? String, "second")

        XCTAssertEqual(try daemon.error("page.show", #"{"name": "nope"}"#).code, "not_found")
        for (args, needle) in [("{}", "missing 'name'"), (#"{"name": 2}"#, "'name' must be a string"),
                               (#"{"name": "main", "transition": "fade"}"#, "'transition' must be an object"),
                               (#"{"name": "main", "transition": {}}"#, "missing 'transition.kind'"),
                               (#"{"name": "main", "transition": {"kind": "spin"}}"#, "'transition.kind' must be one of cut, fade, slide-left, slide-right"),
                               (#"{"name": "main", "transition": {"kind": "fade", "duration": -1}}"#, "'transition.duration'"),
                               (#"{"name": "main", "transition": {"kind": "fade", "duration": "1s"}}"#, "'transition.duration' must be a number"),
                               (#"{"name": "main", "transition": {"kind": "fade", "easing": "bouncy"}}"#, "'transition.easing'"),
                               (#"{"name": "main", "transition": {"kind": "fade", "easing": [2, 0, 0, 1]}}"#, "'transition.easing'")] {
            let error = try daemon.error("page.show", args)
            XCTAssertEqual(error.code, "invalid_argument", args)
            XCTAssertTrue(error.message.contains(needle), "\(args): \(error.message)")
        }
    }

    func testAnimateBasicSpringAndDecay() throws {
        try startDaemon()
        XCTAssertEqual(try daemon.result("animate", #"{"id": "title", "property": "opacity", "to": 0.5, "duration": 0.2, "easing": "linear"}"#)["id"] as? String, "title")
        XCTAssertEqual(try daemon.result("animate", #"{"id": "title", "property": "position", "to": [10, 20], "kind": "spring", "stiffness": 200, "damping": 15}"#)["property"] as? String, "position")
        XCTAssertEqual(try daemon.result("animate", #"{"id": "title", "property": "x", "kind": "decay", "velocity": -300}"#)["property"] as? String, "x")
        XCTAssertEqual(try daemon.result("animate", #"{"id": "bar", "property": "value", "to": 0.9}"#)["id"] as? String, "bar")

        XCTAssertEqual(try daemon.error("animate", #"{"id": "nope", "property": "x", "to": 1}"#).code, "not_found")
        let badProperty = try daemon.error("animate", #"{"id": "title", "property": "wobble", "to": 1}"#)
        XCTAssertEqual(badProperty.code, "invalid_argument")
        XCTAssertTrue(badProperty.message.contains("wobble"), badProperty.message)
        for (args, needle) in [(#"{"property": "x", "to": 1}"#, "missing 'id'"), (#"{"id": "title", "to": 1}"#, "missing 'property'"),
                               (#"{"id": "title", "property": "x"}"#, "missing 'to'"),
                               (#"{"id": "title", "property": "x", "to": "10"}"#, "'to' must be a number or a non-empty array of numbers"),
                               (#"{"id": "title", "property": "x", "to": []}"#, "'to' must be a number or a non-empty array"),
                               (#"{"id": "title", "property": "x", "to": 1, "kind": "wiggle"}"#, "'kind' must be basic, spring or decay"),
                               (#"{"id": "title", "property": "x", "to": 1, "duration": -2}"#, "'duration'"),
                               (#"{"id": "title", "property": "x", "to": 1, "kind": "spring", "stiffness": 0}"#, "'stiffness' must be greater than 0"),
                               (#"{"id": "title", "property": "x", "to": 1, "kind": "spring", "mass": "1"}"#, "'mass' must be a number"),
                               (#"{"id": "title", "property": "x", "kind": "decay"}"#, "missing 'velocity'"),
                               (#"{"id": "title", "property": "x", "kind": "decay", "velocity": 5, "deceleration": 1.5}"#, "'deceleration'")] {
            let error = try daemon.error("animate", args)
            XCTAssertEqual(error.code, "invalid_argument", args)
            XCTAssertTrue(error.message.contains(needle), "\(args): \(error.message)")
        }
    }

    /// kioskctl's scene subcommands, human-readable and raw.
    func testKioskctlSceneSubcommands() throws {
        try startDaemon()
        var r = try daemon.kioskctl(["scene", "get"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(String(decoding: r.stdout, as: UTF8.self).contains("current_page: main"))
        r = try daemon.kioskctl(["widget", "set", "title", "text=From kioskctl", "opacity=0.5"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["widget", "get", "title", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let widget = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        XCTAssertEqual((widget["result"] as? [String: Any])?["text"] as? String, "From kioskctl")
        r = try daemon.kioskctl(["data", "set", "temperature=30", "level=0.75"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "set 2 keys\n")
        r = try daemon.kioskctl(["data", "get", "temperature"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "temperature: 30\n")
        r = try daemon.kioskctl(["page", "show", "second", "--transition", "fade", "--duration", "0.1", "--easing", "ease-in-out"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "page: second\n", r.stderr)
        r = try daemon.kioskctl(["animate", "title", "position", "5", "-6", "--spring", "--stiffness", "150", "--velocity", "1,-2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["animate", "title", "x", "--decay", "--velocity", "-200"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["animate", "title", "x", "-20"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let other = try writeScene(directory, name: "third.yaml", title: "Third")
        r = try daemon.kioskctl(["scene", "load", other.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "loaded \(other.path): pages main, second\n", "returns once shown")
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Third")
        r = try daemon.kioskctl(["scene", "load", "--yaml", "size: display\npages:\n  - name: x\n    widgets: []\n"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["widget", "get", "nope"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("not_found"), r.stderr)
    }
}
