import Foundation
import KioskCore
import KioskRender
import KioskRuntime
import KioskScene
import XCTest

/// `memory.max_image_pixels` on the running scene: `scene.load` refuses an image over it at its location, and an
/// image that grew past it after it was checked fails to render, leaving the widget's placeholder on screen.
final class ImageLimitStageTests: XCTestCase {
    /// A 64x32 PNG (2048 pixels), mid grey.
    private func png() throws -> Data {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("limit-\(UUID().uuidString).png").path
        defer { unlink(path) }
        try writePNG(xrgb8888: [UInt8](repeating: 0x80, count: 64 * 32 * 4), size: Size(width: 64, height: 32), stride: 64 * 4, to: path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    private let scene = """
    background: "#000000"
    pages:
      - widgets:
          - id: poster
            type: image
            path: poster.png
            x: 100
            y: 100
            width: 200
            height: 100

    """

    func testImageOverTheLimitAtRenderTimeShowsThePlaceholderAndSaysWhy() throws {
        let h = try StageHarness(yaml: scene, size: Size(width: 640, height: 480), files: ["poster.png": try png()],
                                 limits: SceneLimits(maximumImagePixels: 2000))
        var events: [StageEvent] = []
        h.listeners.append(h.stage.addEventListener { events.append($0) })
        h.settle()
        XCTAssertEqual(h.stats.rendersFailed, 1)
        // The placeholder (white at 8 % over black), where the image would be; black around it.
        XCTAssertEqual(try h.pixel(x: 200, y: 150), 0x141414)
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0x000000)
        let messages = events.compactMap { event -> String? in
            if case .error("render_failed", let message) = event { return message }
            return nil
        }
        XCTAssertEqual(messages.count, 1, "\(events)")
        XCTAssertTrue(messages.first?.contains("poster.png: PNG of 64x32 pixels") == true, "\(messages)")
        XCTAssertTrue(messages.first?.contains("memory.max_image_pixels (2000") == true, "\(messages)")
    }

    func testSceneLoadRefusesAnImageOverTheLimitAtItsLocation() throws {
        let h = try StageHarness(yaml: scene, size: Size(width: 640, height: 480), files: ["poster.png": try png()],
                                 limits: SceneLimits(maximumImagePixels: 2000))
        XCTAssertThrowsError(try h.loadScene(yaml: scene, baseDirectory: h.directory.path)) { error in
            let message = (error as? StageError)?.message ?? "\(error)"
            XCTAssertEqual((error as? StageError)?.code, .invalidScene)
            XCTAssertTrue(message.contains("inline:6:15: pages[0].widgets[0].path: image 'poster.png': PNG of 64x32 pixels"), message)
        }
        // Within the limit, the same scene loads.
        let roomy = try StageHarness(yaml: scene, size: Size(width: 640, height: 480), files: ["poster.png": try png()])
        XCTAssertNoThrow(try roomy.loadScene(yaml: scene, baseDirectory: roomy.directory.path))
    }
}
