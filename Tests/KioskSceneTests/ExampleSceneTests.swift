import Foundation
import KioskCore
import KioskScene
import XCTest

/// The scenes shipped in `scenes/` validate, and decode into the model their authors meant.
final class ExampleSceneTests: XCTestCase {
    func testEveryExampleSceneValidates() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: SceneFixtures.examples.path).filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertEqual(names, ["dashboard.yaml", "hmi-panel.yaml", "signage-loop.yaml"])
        for name in names {
            let path = SceneFixtures.examples.appendingPathComponent(name).path
            XCTAssertEqual(SceneFixtures.lines(path, fontAvailable: { _ in true }), ["ok"], name)
        }
    }

    func testDashboardHasEveryWidgetTheDefaultSceneNeeds() throws {
        let loaded = try SceneLoader.load(path: SceneFixtures.examples.appendingPathComponent("dashboard.yaml").path)
        let scene = loaded.scene
        XCTAssertEqual(scene.size, .display)
        XCTAssertEqual(scene.pages.count, 1)
        let types = Set(scene.allWidgets.map(\.type))
        XCTAssertTrue(types.isSuperset(of: [.clock, .text, .ticker, .progress, .qrcode, .image, .row, .column]), "\(types)")
        guard case .image(let image)? = scene.allWidgets.first(where: { $0.id == "logo" })?.content else { return XCTFail("no logo image") }
        XCTAssertTrue(image.path.hasPrefix("/") && image.path.hasSuffix("scenes/images/logo.png"), image.path)
        XCTAssertTrue(FileManager.default.fileExists(atPath: image.path))
        guard case .progress(let progress)? = scene.allWidgets.first(where: { $0.id == "upload" })?.content else { return XCTFail("no progress") }
        XCTAssertEqual(progress.value, .bound(key: "upload", min: 0, max: 1))
        guard case .text(let value)? = scene.allWidgets.first(where: { $0.id == "temperature-value" })?.content else { return XCTFail("no text") }
        XCTAssertEqual(value.text.keys, ["temperature"])
        XCTAssertEqual(scene.allWidgets.first(where: { $0.id == "temperature-value" })?.onChange, .pulse)
        XCTAssertEqual(scene.data["temperature"], "21.5")
        XCTAssertEqual(scene.allWidgets.first(where: { $0.id == "time" })?.frame.width, .percent(40))
    }

    func testSignageLoopPagesAndTransitions() throws {
        let scene = try SceneLoader.load(path: SceneFixtures.examples.appendingPathComponent("signage-loop.yaml").path).scene
        XCTAssertEqual(scene.pages.map(\.name), ["welcome", "offer", "map", "video", "clock"])
        XCTAssertEqual(scene.pages.map(\.transition.kind), [.cut, .fade, .slideLeft, .fade, .slideRight])
        XCTAssertEqual(scene.pages[1].transition.duration, 0.8)
        XCTAssertEqual(scene.pages[1].transition.easing, .easeInOut)
        XCTAssertEqual(scene.pages[2].transition.easing, .cubicBezier(0.2, 0.8, 0.2, 1))
        XCTAssertEqual(scene.pages.map(\.duration), [8, 10, 10, nil, 6])
        XCTAssertEqual(scene.pages.map(\.advancesAfterVideo), [false, false, false, true, false], "the video page advances when its clip ends")
    }

    func testHMIPanelBindsSparklineAndButtonStates() throws {
        let scene = try SceneLoader.load(path: SceneFixtures.examples.appendingPathComponent("hmi-panel.yaml").path).scene
        let widgets = scene.allWidgets
        guard case .sparkline(let spark)? = widgets.first(where: { $0.id == "pressure-trend" })?.content else { return XCTFail("no sparkline") }
        XCTAssertEqual(spark.bind, "pressure")
        XCTAssertEqual(spark.capacity, 120)
        guard case .button(let start)? = widgets.first(where: { $0.id == "start" })?.content else { return XCTFail("no button") }
        XCTAssertEqual(start.states[.pressed]?.background, .colour(Color(parsing: "#1b5e20")!))
        XCTAssertTrue(start.enabled)
        guard case .button(let reset)? = widgets.first(where: { $0.id == "reset" })?.content else { return XCTFail("no button") }
        XCTAssertFalse(reset.enabled)
        XCTAssertEqual(Set(widgets.filter { $0.type == .button }.map(\.id)), ["start", "stop", "reset"])
    }

    func testJSONIsAcceptedToo() throws {
        let dir = try SceneFixtures.directory("json")
        let json = #"{"pages": [{"name": "p", "widgets": [{"id": "t", "type": "text", "text": "{x}", "font": {"size": 12}}]}]}"#
        let (_, lines) = try SceneFixtures.check(json, in: dir, name: "scene.json")
        XCTAssertEqual(lines, ["ok"])
    }

    func testFixedSizeDataKeysAndTransitionShorthand() throws {
        let dir = try SceneFixtures.directory("shorthand")
        let yaml = """
        size: 1024x768
        data: {room.temp: 21}
        pages:
          - name: a
            widgets: [{type: text, text: "{room.temp}", width: 50%, x: -10px}]
          - name: b
            transition: fade
            widgets: []

        """
        let file = dir.appendingPathComponent("scene.yaml")
        try Data(yaml.utf8).write(to: file)
        let scene = try SceneLoader.load(path: file.path).scene
        XCTAssertEqual(scene.size, .fixed(width: 1024, height: 768))
        XCTAssertEqual(scene.data, ["room.temp": "21"])
        XCTAssertEqual(scene.pages[1].transition.kind, .fade)
        XCTAssertEqual(scene.pages[1].transition.duration, 0.5)
        XCTAssertEqual(scene.pages[0].widgets[0].frame.x, .pixels(-10))
        XCTAssertEqual(scene.pages[0].widgets[0].frame.width?.resolve(in: 1024), 512)
        XCTAssertNil(scene.pages[0].widgets[0].id)
    }

    func testSceneDirectoryIsOneErrorLine() throws {
        let dir = try SceneFixtures.directory("is-a-directory")
        XCTAssertEqual(SceneFixtures.lines(dir.path), ["\(dir.path):1:1: the scene path is a directory, not a regular file"])
    }
}
