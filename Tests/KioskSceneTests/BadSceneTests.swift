import Foundation
import KioskScene
import XCTest

/// Each kind of mistake a scene author makes gives one line `FILE:LINE:COL: PATH: message` pointing at the value
/// (or key) at fault. Widget lines in these scenes start on line 4; `- ` sits in columns 7-8, so a widget's keys
/// start in column 9.
final class BadSceneTests: XCTestCase {
    private func check(_ widgetLines: [String], _ test: String = #function, limits: SceneLimits = SceneLimits(),
                       fontAvailable: ((String) -> Bool)? = nil, setUp: (URL) throws -> Void = { _ in }) throws -> (String, [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        try setUp(dir)
        return try SceneFixtures.check(SceneFixtures.onePage(widgetLines), in: dir, limits: limits, fontAvailable: fontAvailable)
    }

    private func assertOneLine(_ result: (String, [String]), _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let (path, lines) = result
        XCTAssertEqual(lines.count, 1, lines.joined(separator: "\n"), file: file, line: line)
        XCTAssertTrue(lines.first?.hasPrefix("\(path):\(expected)") == true, "got: \(lines.first ?? "nothing")\nwanted prefix: \(path):\(expected)",
                      file: file, line: line)
    }

    func testUnknownWidgetTypeSuggestsTheNearestOne() throws {
        assertOneLine(try check(["- id: a", "  type: buton"]),
                      "5:15: pages[0].widgets[0].type: unknown widget type 'buton'; did you mean 'button'?")
    }

    func testDuplicateIDNamesTheFirstUse() throws {
        let r = try check(["- id: a", "  type: rect", "- id: a", "  type: panel"])
        assertOneLine(r, "6:13: pages[0].widgets[1].id: duplicate id 'a' (first used at \(r.0):4:13)")
    }

    func testStringWhereANumberBelongs() throws {
        assertOneLine(try check(["- id: t", "  type: text", "  text: hi", "  font:", "    size: big"]),
                      "8:17: pages[0].widgets[0].font.size: expected a number")
        // A quoted number is a string in YAML, and the scene says so rather than guessing.
        assertOneLine(try check(["- id: t", "  type: text", "  text: hi", "  opacity: \"0.5\""], "quoted"),
                      "7:18: pages[0].widgets[0].opacity: expected a number")
    }

    func testBadColour() throws {
        assertOneLine(try check(["- id: r", "  type: rect", "  background: \"#12345\""]),
                      "6:21: pages[0].widgets[0].background: '#12345' is not a colour")
    }

    func testMissingImage() throws {
        assertOneLine(try check(["- id: i", "  type: image", "  path: images/nope.png"]),
                      "6:15: pages[0].widgets[0].path: image 'images/nope.png' not found")
    }

    func testFileThatIsNotAnImage() throws {
        let r = try check(["- id: i", "  type: image", "  path: notes.png"], setUp: { dir in
            try Data("these are notes, not pixels\n".utf8).write(to: dir.appendingPathComponent("notes.png"))
        })
        assertOneLine(r, "6:15: pages[0].widgets[0].path: 'notes.png' is not a PNG, JPEG or SVG image")
    }

    func testDirectoryInsteadOfImage() throws {
        let r = try check(["- id: i", "  type: image", "  path: images"], setUp: { dir in
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("images"), withIntermediateDirectories: true)
        })
        assertOneLine(r, "6:15: pages[0].widgets[0].path: image 'images' is a directory")
    }

    func testImagesResolveRelativeToTheSceneFileAndSVGIsRecognised() throws {
        let r = try check(["- id: i", "  type: image", "  path: art/a.svg", "- id: j", "  type: image", "  path: art/b.jpg"], setUp: { dir in
            let art = dir.appendingPathComponent("art")
            try FileManager.default.createDirectory(at: art, withIntermediateDirectories: true)
            try Data("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n".utf8).write(to: art.appendingPathComponent("a.svg"))
            try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]).write(to: art.appendingPathComponent("b.jpg"))
        })
        XCTAssertEqual(r.1, ["ok"])
    }

    func testUnclosedBinding() throws {
        assertOneLine(try check(["- id: t", "  type: text", "  text: \"Temp {unclosed\""]),
                      "6:15: pages[0].widgets[0].text: binding '{' at character 6 is never closed with '}'")
    }

    func testBadBindKey() throws {
        assertOneLine(try check(["- id: p", "  type: progress", "  value: {bind: \"9lives\"}"]),
                      "6:23: pages[0].widgets[0].value.bind: '9lives' is not a binding key")
    }

    func testNonUTF8IsRejectedWithThePositionOfTheBadByte() throws {
        let dir = try SceneFixtures.directory("non-utf8")
        let file = dir.appendingPathComponent("latin1.yaml")
        try (Data("pages:\n  - name: caf".utf8) + Data([0xE9]) + Data("\n    widgets: []\n".utf8)).write(to: file)
        XCTAssertEqual(SceneFixtures.lines(file.path), ["\(file.path):2:14: not UTF-8 text: invalid byte sequence starting with 0xE9"])
    }

    func testOverSizeFile() throws {
        let dir = try SceneFixtures.directory("over-size")
        let file = dir.appendingPathComponent("huge.yaml")
        let limit = SceneLimits().maximumBytes
        XCTAssertEqual(limit, 4 * 1024 * 1024)
        try Data(("# " + String(repeating: "x", count: limit) + "\n").utf8).write(to: file)
        XCTAssertEqual(SceneFixtures.lines(file.path), ["\(file.path):1:1: scene file is \(limit + 3) bytes; the limit is \(limit)"])
    }

    func testTooDeepNesting() throws {
        // 40 columns inside each other; the 33rd is one level too many.
        var lines: [String] = []
        for level in 0..<40 {
            let indent = String(repeating: " ", count: 4 * level)
            lines += [indent + "- type: column", indent + "  children:"]
        }
        lines.append(String(repeating: " ", count: 160) + "- type: rect")
        let r = try check(lines)
        let path = "pages[0].widgets[0]" + String(repeating: ".children[0]", count: 32)
        assertOneLine(r, "\(4 + 2 * 32):\(9 + 4 * 32): \(path): widgets nest deeper than 32 levels")
    }

    func testDeepFlowNestingIsRefusedBeforeYAMLComposesIt() throws {
        let dir = try SceneFixtures.directory("flow-deep")
        let (path, lines) = try SceneFixtures.check("pages: " + String(repeating: "[", count: 100_000), in: dir)
        XCTAssertEqual(lines, ["\(path):1:88: nesting deeper than 80 levels"])
    }

    func testPercentageOutOfRange() throws {
        assertOneLine(try check(["- id: r", "  type: rect", "  width: 150%"]),
                      "6:16: pages[0].widgets[0].width: percentage 150% is out of range 0%...100%")
    }

    func testUnknownKeySuggestsTheNearestKnownOne() throws {
        assertOneLine(try check(["- id: r", "  type: rect", "  backgorund: red"]),
                      "6:9: pages[0].widgets[0].backgorund: unknown key 'backgorund'; did you mean 'background'?")
    }

    func testKeyOfAnotherWidgetType() throws {
        assertOneLine(try check(["- id: t", "  type: text", "  text: hi", "  speed: 3"]),
                      "7:9: pages[0].widgets[0].speed: unknown key 'speed'")
    }

    func testUnknownFontIsAWarningNotAnError() throws {
        let r = try check(["- id: t", "  type: text", "  text: hi", "  font:", "    family: Foo"], fontAvailable: { $0 == "Sans" })
        XCTAssertEqual(r.1, ["warning: \(r.0):8:19: pages[0].widgets[0].font.family: font family 'Foo' not found; falling back to Sans", "ok"])
        // Without the hook nothing is said: the module never looks fonts up itself.
        let quiet = try check(["- id: t", "  type: text", "  text: hi", "  font:", "    family: Foo"], "quiet")
        XCTAssertEqual(quiet.1, ["ok"])
    }

    func testAllErrorsAreReportedNotJustTheFirst() throws {
        let r = try check(["- id: a", "  type: rect", "  background: nope",
                           "- id: a", "  type: txt",
                           "- id: c", "  type: progress", "  value: 2"])
        XCTAssertEqual(r.1.count, 4, r.1.joined(separator: "\n"))
        let expected = ["6:21: pages[0].widgets[0].background: 'nope' is not a colour",
                        "7:13: pages[0].widgets[1].id: duplicate id 'a'",
                        "8:15: pages[0].widgets[1].type: unknown widget type 'txt'",
                        "11:16: pages[0].widgets[2].value: 2 is out of range 0...1"]
        for (line, want) in zip(r.1, expected) {
            XCTAssertTrue(line.hasPrefix("\(r.0):\(want)"), "got \(line), wanted \(want)")
        }
    }

    func testWidgetCountLimit() throws {
        let lines = (0..<5).flatMap { ["- id: r\($0)", "  type: rect"] }
        assertOneLine(try check(lines, limits: SceneLimits(maximumWidgets: 3)),
                      "10:9: pages[0].widgets[3]: more than 3 widgets in the scene")
    }

    func testYAMLSyntaxErrorHasALocation() throws {
        let dir = try SceneFixtures.directory("syntax")
        let (path, lines) = try SceneFixtures.check("pages:\n  - name: [main\n", in: dir)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines[0].hasPrefix("\(path):3:1: YAML syntax:"), lines[0])
    }

    func testMissingRequiredPropertyAndBadEnum() throws {
        let r = try check(["- id: i", "  type: image", "  fit: strech"])
        XCTAssertEqual(r.1.count, 2, r.1.joined(separator: "\n"))
        XCTAssertEqual(r.1, ["\(r.0):4:9: pages[0].widgets[0]: an image widget needs 'path'",
                             "\(r.0):6:14: pages[0].widgets[0].fit: 'strech' is not one of contain, cover, fill, none"])
    }
}
