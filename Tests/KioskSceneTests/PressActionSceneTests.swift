import Foundation
import KioskScene
import XCTest

/// `on_press` in the scene: the three actions decode into the model, and each mistake gives one located line.
final class PressActionSceneTests: XCTestCase {
    private func check(_ widgetLines: [String], _ test: String = #function) throws -> (String, [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        return try SceneFixtures.check(SceneFixtures.onePage(widgetLines), in: dir)
    }

    private func assertOneLine(_ result: (String, [String]), _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let (path, lines) = result
        XCTAssertEqual(lines, ["\(path):\(expected)"], file: file, line: line)
    }

    func testTheThreeActionsDecode() throws {
        let text = """
            pages:
              - name: main
                widgets:
                  - {id: a, type: button, label: A, on_press: {page: other, transition: fade}}
                  - {id: b, type: panel, on_press: {data: {mode: auto, speed: 3}}}
                  - {id: c, type: text, text: C, on_press: {emit: hello}}
                  - {id: d, type: button, label: D}
              - name: other
                widgets:
                  - {id: e, type: button, label: E, on_press: {page: main}}
            """
        let loaded = try SceneLoader.parse(data: Data(text.utf8), file: "actions.yaml", baseDirectory: "/tmp")
        let byID = Dictionary(uniqueKeysWithValues: loaded.scene.allWidgets.compactMap { w in w.id.map { ($0, w) } })
        XCTAssertEqual(byID["a"]?.onPress, .showPage(name: "other", transition: Transition(kind: .fade, duration: 0.5, easing: .easeInOut)))
        XCTAssertEqual(byID["b"]?.onPress, .setData(["mode": "auto", "speed": "3"]))
        XCTAssertEqual(byID["c"]?.onPress, .emit("hello"))
        XCTAssertEqual(byID["c"]?.onPress?.emittedName, "hello")
        XCTAssertNil(byID["d"]?.onPress)
        XCTAssertEqual(byID["e"]?.onPress, .showPage(name: "main", transition: nil))
    }

    func testAnUnknownPageListsThePages() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, on_press: {page: mian}}"]),
                      "4:58: pages[0].widgets[0].on_press.page: no page named 'mian'; pages: main")
    }

    func testOneActionAtATime() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, on_press: {emit: x, data: {k: v}}}"]),
                      "4:51: pages[0].widgets[0].on_press: give one of 'page', 'data' or 'emit', not 'data' and 'emit'")
    }

    func testTransitionGoesWithPage() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, on_press: {emit: x, transition: fade}}"]),
                      "4:61: pages[0].widgets[0].on_press.transition: 'transition' goes with 'page'")
    }

    func testAnUnknownKeySuggestsTheNearest() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, on_press: {emitt: x}}"]),
                      "4:52: pages[0].widgets[0].on_press.emitt: unknown key 'emitt'; did you mean 'emit'?")
    }

    func testDataKeysMustBeBindingKeys() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, on_press: {data: {\"bad key\": 1}}}"]),
                      "4:59: pages[0].widgets[0].on_press.data.bad key: 'bad key' is not a binding key")
    }

    /// `disabled: true` turns a button off; `enabled: false`, the older spelling, says the same.
    func testDisabledButtons() throws {
        let text = """
            widgets:
              - {id: a, type: button, label: A, disabled: true}
              - {id: b, type: button, label: B, enabled: false}
              - {id: c, type: button, label: C, disabled: false}
              - {id: d, type: button, label: D}
            """
        let loaded = try SceneLoader.parse(data: Data(text.utf8), file: "disabled.yaml", baseDirectory: "/tmp")
        let enabled = loaded.scene.allWidgets.compactMap { w -> String? in
            guard case .button(let b) = w.content else { return nil }
            return "\(w.id ?? "?")=\(b.enabled)"
        }
        XCTAssertEqual(enabled, ["a=false", "b=false", "c=true", "d=true"])
    }

    func testDisabledAndEnabledTogetherAreAnError() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, disabled: true, enabled: true}"]),
                      "4:57: pages[0].widgets[0].enabled: give 'disabled' or 'enabled', not both")
        assertOneLine(try check(["- {id: a, type: button, label: A, disabled: 1}"]),
                      "4:51: pages[0].widgets[0].disabled: expected true or false")
    }

    func testAScalarIsNotAnAction() throws {
        assertOneLine(try check(["- {id: a, type: button, label: A, on_press: start}"]),
                      "4:51: pages[0].widgets[0].on_press: expected an action: {page: NAME, transition: ...}, {data: {key: value}} or {emit: NAME}")
    }
}
