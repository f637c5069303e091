import Foundation
import KioskCore
import KioskDisplay
import XCTest

final class EngineStatsTests: XCTestCase {
    func testStatsEncodeWithSnakeCaseKeys() throws {
        let h = try EngineHarness()
        h.addSolidLayer("a", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red)
        h.settle()
        let data = try JSONEncoder().encode(h.stats)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        for key in [
            "renders_started", "renders_completed", "stale_renders_dropped", "frames_composed", "compositions_replaced",
            "frames_presented", "bytes_copied_per_frame", "render_ms", "fps", "loop_iterations", "loop_wakeups",
            "render_strategy",
        ] {
            XCTAssertNotNil(object[key], key)
        }
        XCTAssertEqual(object["render_strategy"] as? String, "manual")
        let bytes = try XCTUnwrap(object["bytes_copied_per_frame"] as? [String: Any])
        XCTAssertEqual(bytes["max"] as? Int, 64 * 48 * 4)
        let renderMs = try XCTUnwrap(object["render_ms"] as? [String: Any])
        XCTAssertNotNil((renderMs["solid"] as? [String: Any])?["p99"])

        // An encoder that converts keys itself leaves them as they are.
        let converting = JSONEncoder()
        converting.keyEncodingStrategy = .convertToSnakeCase
        let converted = try XCTUnwrap(JSONSerialization.jsonObject(with: converting.encode(h.stats)) as? [String: Any])
        XCTAssertEqual(Set(converted.keys), Set(object.keys))
        XCTAssertEqual(try JSONDecoder().decode(EngineStats.self, from: data), h.stats)
    }

    func testRenderTimesAreGroupedByContentKind() throws {
        let h = try EngineHarness()
        h.root.addChild(Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: SolidContent(color: red, kind: "text")))
        h.root.addChild(Layer(frame: Rect(x: 8, y: 0, width: 8, height: 8), content: SolidContent(color: red, kind: "image")))
        h.root.addChild(Layer(frame: Rect(x: 16, y: 0, width: 8, height: 8), content: SolidContent(color: red, kind: "image")))
        h.settle()
        XCTAssertEqual(h.stats.renderMs["text"]?.count, 1)
        XCTAssertEqual(h.stats.renderMs["image"]?.count, 2)
    }

    func testCompositorSizeMustMatchTheMode() throws {
        let (loop, _) = MainLoop.manual()
        let backend = try HeadlessBackend(mode: EngineHarness.mode)
        XCTAssertThrowsError(try LayerEngine(loop: loop, backend: backend, compositor: RecordingCompositor(size: Size(width: 10, height: 10)),
                                             pool: RenderQueuePool(strategy: .manual))) { error in
            XCTAssertEqual("\(error)", "Headless-1: compositor is 10x10, the mode is 64x48")
        }
    }
}
