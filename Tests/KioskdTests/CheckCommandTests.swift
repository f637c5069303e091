import Foundation
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// `kioskd check SCENE` as a user runs it: `ok` and exit 0 for a good scene, one located line per error and
/// exit 1 for a bad one, and never a display opened.
final class CheckCommandTests: XCTestCase {
    private let scenes = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scenes")

    func testExampleScenesPrintOkAndExitZero() throws {
        for name in ["dashboard.yaml", "signage-loop.yaml", "hmi-panel.yaml"] {
            let r = try KioskdProcess.run(["check", scenes.appendingPathComponent(name).path], timeout: 60)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            XCTAssertEqual(r.stdout, "ok\n", name)
            XCTAssertEqual(r.errorLines, [], name)
        }
    }

    func testBadScenePrintsEveryErrorWithItsLocationAndExitsOne() throws {
        let dir = try KioskdProcess.scratchDirectory("check-bad")
        let file = dir.appendingPathComponent("scene.yaml")
        try Data("""
        pages:
          - widgets:
              - id: a
                type: text
                text: "{unclosed"
              - id: a
                type: rect
                background: "#12"

        """.utf8).write(to: file)
        let r = try KioskdProcess.run(["check", file.path], timeout: 60)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.errorLines, [
            "\(file.path):5:15: pages[0].widgets[0].text: binding '{' at character 1 is never closed with '}'",
            "\(file.path):6:13: pages[0].widgets[1].id: duplicate id 'a' (first used at \(file.path):3:13)",
            "\(file.path):8:21: pages[0].widgets[1].background: '#12' is not a colour (#RGB, #RRGGBB, #RRGGBBAA or one of black, blue, cyan, gray, green, grey, magenta, orange, red, transparent, white, yellow)",
        ])
    }

    func testMissingSceneFileIsOneErrorLine() throws {
        let r = try KioskdProcess.run(["check", "/nonexistent/scene.yaml"], timeout: 60)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.errorLines, ["/nonexistent/scene.yaml:1:1: scene file not found"])
    }

    func testImageOverTheConfiguredPixelLimitIsALocatedError() throws {
        let dir = try KioskdProcess.scratchDirectory("check-pixels")
        try writePNG(xrgb8888: [UInt8](repeating: 0x40, count: 100 * 50 * 4), size: Size(width: 100, height: 50),
                     stride: 400, to: dir.appendingPathComponent("poster.png").path)
        let file = dir.appendingPathComponent("scene.yaml")
        try Data("pages:\n  - widgets:\n      - type: image\n        path: poster.png\n".utf8).write(to: file)
        let config = dir.appendingPathComponent("kioskd.yaml")
        try Data("memory:\n  max_image_pixels: 4999\n".utf8).write(to: config)
        let refused = try KioskdProcess.run(["check", "--no-font-check", "--config", config.path, file.path], timeout: 60)
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(refused.errorLines, [
            "\(file.path):4:15: pages[0].widgets[0].path: image 'poster.png': PNG of 100x50 pixels is over memory.max_image_pixels (4999)",
        ])
        try Data("memory:\n  max_image_pixels: 5000\n".utf8).write(to: config)
        let accepted = try KioskdProcess.run(["check", "--no-font-check", "--config", config.path, file.path], timeout: 60)
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
        XCTAssertEqual(accepted.stdout, "ok\n")
    }
}
