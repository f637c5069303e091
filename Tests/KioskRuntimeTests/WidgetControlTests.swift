import Foundation
import KioskCore
import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// What the control socket does to a running scene: `widget.get` / `widget.set`, `animate`, `scene.get`,
/// `scene.load` from text, and their errors.
final class WidgetControlTests: XCTestCase {
    static let scene = """
        size: display
        background: "#000000"
        pages:
          - name: main
            widgets:
              - {id: box, type: rect, background: "#ff0000", x: 10, y: 10, width: 100, height: 100}
              - {id: label, type: text, text: "T={t}", x: 200, y: 10, width: 300, height: 40}
              - {id: bar, type: progress, value: 0.25, x: 10, y: 200, width: 400, height: 20, foreground: "#00ff00", background: "#000080"}
              - {id: pic, type: image, path: logo.png, x: 600, y: 10, width: 100, height: 100}
          - name: second
            widgets:
              - {id: other, type: rect, background: "#0000ff"}
        """

    static let logo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scenes/images/logo.png")

    private func harness() throws -> StageHarness {
        try StageHarness(yaml: Self.scene, files: ["logo.png": try Data(contentsOf: Self.logo)])
    }

    func testWidgetGetReportsModelAndLayout() throws {
        let h = try harness()
        h.settle()
        let box = try h.stage.widget(id: "box")
        XCTAssertEqual(box["type"], .string("rect"))
        XCTAssertEqual(box["page"], .string("main"))
        XCTAssertEqual(box["background"], .string("#ff0000ff"))
        XCTAssertEqual(box["frame"], .object(["x": .number(10), "y": .number(10), "width": .number(100), "height": .number(100)]))
        let label = try h.stage.widget(id: "label")
        XCTAssertEqual(label["text"], .string("T={t}"))
        XCTAssertEqual(label["shown_text"], .string("T=–"))
        XCTAssertThrowsError(try h.stage.widget(id: "nope")) { XCTAssertEqual(($0 as? StageError)?.code, .notFound) }
    }

    func testWidgetSetMovesRecoloursAndRetexts() throws {
        let h = try harness()
        h.settle()
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0xFF0000)
        try h.setWidget(id: "box", properties: ["x": .number(500), "background": .string("#00ff00"), "width": .string("10%")])
        try h.setWidget(id: "label", properties: ["text": .string("now {t}!")])
        try h.stage.setData(["t": "5"])
        h.settle()
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0x000000, "moved away")
        XCTAssertEqual(try h.pixel(x: 550, y: 50), 0x00FF00, "moved here, recoloured, 10% wide")
        XCTAssertEqual(try h.pixel(x: 605, y: 50) == 0x00FF00, false, "10% of 1024 is 102 px: ends before x 602")
        XCTAssertEqual(try h.stage.widget(id: "label")["shown_text"], .string("now 5!"))
        try h.setWidget(id: "box", properties: ["hidden": .bool(true)])
        h.settle()
        XCTAssertEqual(try h.pixel(x: 550, y: 50), 0x000000)
    }

    func testWidgetSetChecksEverythingBeforeChangingAnything() throws {
        let h = try harness()
        h.settle()
        let cases: [(String, [String: PropertyValue], String)] = [
            ("box", ["speed": .number(3)], "no settable property 'speed'"),
            ("box", ["opacity": .number(2)], "props.opacity: expected a number from 0 to 1"),
            ("box", ["background": .string("purplish")], "props.background: expected a colour"),
            ("box", ["x": .bool(true)], "props.x: expected pixels"),
            ("label", ["text": .string("{oops")], "never closed"),
            ("pic", ["path": .string("missing.png")], "missing.png"),
            ("bar", ["value": .string("half")], "props.value"),
            ("box", [:], "at least one property"),
        ]
        for (id, props, expected) in cases {
            // A valid change rides along with each bad one: it must not be applied either.
            let request = props.isEmpty ? props : ["x": .number(300)].merging(props) { $1 }
            XCTAssertThrowsError(try h.setWidget(id: id, properties: request)) { error in
                XCTAssertEqual((error as? StageError)?.code, .invalidArgument, "\(props)")
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
        XCTAssertEqual(try h.stage.widget(id: "box")["frame"],
                       .object(["x": .number(10), "y": .number(10), "width": .number(100), "height": .number(100)]),
                       "a request with any bad property changes nothing")
        XCTAssertThrowsError(try h.setWidget(id: "ghost", properties: ["x": .number(1)])) {
            XCTAssertEqual(($0 as? StageError)?.code, .notFound)
        }
    }

    /// `widget.set {path}` on `h`'s `pic`, waited for; whether it was answered before `setWidget` returned.
    private func setImage(_ h: StageHarness, _ properties: [String: PropertyValue]) -> (Result<Void, StageError>?, answeredAtOnce: Bool) {
        var answeredAtOnce = false
        let outcome = h.awaitLoad { done in
            var answered = false
            h.stage.setWidget(id: "pic", properties: properties) { answered = true; done($0) }
            answeredAtOnce = answered
        }
        return (outcome, answeredAtOnce)
    }

    func testAnImagePathIsCheckedOffTheLoopAndEveryKindOfNonRegularFileIsRefused() throws {
        let special = try SpecialFiles("widget-set")
        let h = try harness()
        h.settle()
        let before = try h.stage.widget(id: "pic")["path"]
        for (path, kind) in special.all {
            let (outcome, answeredAtOnce) = setImage(h, ["path": .string(path), "x": .number(300)])
            XCTAssertFalse(answeredAtOnce, "the file is checked on a worker, the answer comes on a later turn of the loop")
            XCTAssertThrowsError(try XCTUnwrap(outcome, "answered within 10 s").get(), path) { error in
                XCTAssertEqual((error as? StageError)?.code, .invalidArgument, "\(error)")
                XCTAssertEqual("\(error)", "props.path: image '\(path)' is \(kind), not a regular file")
            }
        }
        XCTAssertEqual(try h.stage.widget(id: "pic")["path"], before, "nothing was applied")
        XCTAssertEqual(try h.stage.widget(id: "pic")["frame"],
                       .object(["x": .number(600), "y": .number(10), "width": .number(100), "height": .number(100)]))
    }

    func testAGoodImagePathIsAppliedAfterItsCheckAndOtherPropertiesAtOnce() throws {
        let h = try harness()
        h.settle()
        let (outcome, answeredAtOnce) = setImage(h, ["path": .string(Self.logo.path)])
        XCTAssertFalse(answeredAtOnce)
        XCTAssertNoThrow(try XCTUnwrap(outcome).get())
        XCTAssertEqual(try h.stage.widget(id: "pic")["path"], .string(Self.logo.path))
        var opacity: Result<Void, StageError>?
        h.stage.setWidget(id: "box", properties: ["opacity": .number(0.5)]) { opacity = $0 }
        XCTAssertNotNil(opacity, "a change without a file is answered at once")
    }

    func testAnimateOpacityWithABasicCurveEndsAtTheTarget() throws {
        let h = try harness()
        h.settle()
        try h.stage.animate(id: "box", property: "opacity", to: [0], .basic(duration: 0.5, timing: .linear))
        h.run(for: .milliseconds(250))
        let mid = try h.pixel(x: 50, y: 50) >> 16
        XCTAssertTrue((60...200).contains(mid), "half-way: \(mid)")
        h.run(for: .milliseconds(400))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0x000000)
    }

    func testAnimateProgressWithASpringAndPositionWithADecay() throws {
        let h = try harness()
        h.settle()
        try h.stage.animate(id: "bar", property: "value", to: [1], .spring(stiffness: 200, damping: 30, mass: 1, velocity: nil))
        try h.stage.animate(id: "box", property: "x", to: [], .decay(velocity: [1000], deceleration: 0.995))
        h.run(for: .seconds(3))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 395, y: 210), 0x00FF00, "the bar filled")
        guard case .object(let frame)? = try h.stage.widget(id: "box")["frame"], case .number(let x)? = frame["x"] else {
            return XCTFail("no frame")
        }
        // A decay at 1000 px/s slowing by 0.995 per ms stops 1000 / (1000 · ln(1/0.995)) ≈ 199.5 px further on.
        XCTAssertEqual(x, 10 + 199.5, accuracy: 1.5)
    }

    func testAnimateRefusesUnknownPropertiesAndBadValues() throws {
        let h = try harness()
        XCTAssertThrowsError(try h.stage.animate(id: "box", property: "wobble", to: [1], .basic(duration: 1, timing: .linear))) {
            XCTAssertEqual(($0 as? StageError)?.code, .invalidArgument)
            XCTAssertTrue("\($0)".contains("wobble") && "\($0)".contains("opacity"), "\($0)")
        }
        XCTAssertThrowsError(try h.stage.animate(id: "box", property: "position", to: [1], .basic(duration: 1, timing: .linear))) {
            XCTAssertEqual(($0 as? StageError)?.code, .invalidArgument, "position takes two values")
        }
        XCTAssertThrowsError(try h.stage.animate(id: "box", property: "value", to: [1], .basic(duration: 1, timing: .linear))) {
            XCTAssertTrue("\($0)".contains("progress"), "\($0)")
        }
        XCTAssertThrowsError(try h.stage.animate(id: "box", property: "opacity", to: [3], .basic(duration: 1, timing: .linear)))
        XCTAssertThrowsError(try h.stage.animate(id: "ghost", property: "opacity", to: [1], .basic(duration: 1, timing: .linear))) {
            XCTAssertEqual(($0 as? StageError)?.code, .notFound)
        }
    }

    func testSceneGetAndInlineLoad() throws {
        let h = try harness()
        h.settle()
        guard case .object(let d) = h.stage.sceneDescription else { return XCTFail("not an object") }
        XCTAssertEqual(d["pages"], .array([.string("main"), .string("second")]))
        XCTAssertEqual(d["current_page"], .string("main"))
        XCTAssertEqual(d["size"], .object(["width": .number(1024), "height": .number(768)]))

        try h.loadScene(yaml: "pages:\n  - name: only\n    widgets:\n      - {id: z, type: rect, background: \"#ffffff\"}\n",
                              baseDirectory: h.directory.path)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 5, y: 5), 0xFFFFFF)
        XCTAssertEqual(h.stage.currentPage, "only")
        XCTAssertThrowsError(try h.loadScene(yaml: "pages: [", baseDirectory: "/")) {
            XCTAssertEqual(($0 as? StageError)?.code, .invalidScene)
            XCTAssertTrue("\($0)".contains("inline:"), "\($0)")
        }
        XCTAssertThrowsError(try h.loadScene(path: "/nonexistent/scene.yaml")) {
            XCTAssertEqual(($0 as? StageError)?.code, .ioError)
            XCTAssertTrue("\($0)".contains("/nonexistent/scene.yaml") && "\($0)".contains("ENOENT"), "\($0)")
        }
        h.settle()
        XCTAssertEqual(try h.pixel(x: 5, y: 5), 0xFFFFFF, "a failed load keeps the scene")
    }

    /// The example scenes in the repository all run and show something.
    func testExampleScenesRender() throws {
        let dir = Self.logo.deletingLastPathComponent().deletingLastPathComponent()
        for name in ["dashboard.yaml", "signage-loop.yaml", "hmi-panel.yaml"] {
            let h = try StageHarness(path: dir.appendingPathComponent(name).path, size: Size(width: 800, height: 480))
            h.settle()
            XCTAssertEqual(h.stats.rendersFailed, 0, name)
            let screen = try h.screen()
            var colours = Set<UInt32>()
            for i in stride(from: 0, to: screen.count, by: 4 * 97) {
                colours.insert(UInt32(screen[i]) | UInt32(screen[i + 1]) << 8 | UInt32(screen[i + 2]) << 16)
            }
            XCTAssertGreaterThan(colours.count, 10, "\(name) shows a picture")
        }
    }
}
