import Foundation
import KioskScene
import XCTest

/// `plane: true` on an image widget: what decodes, and each mistake as one located line.
final class PlaneSceneTests: XCTestCase {
    private let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>"#

    private func check(_ widgetLines: [String], _ test: String = #function) throws -> (String, [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        try Data(svg.utf8).write(to: dir.appendingPathComponent("poster.svg"))
        return try SceneFixtures.check(SceneFixtures.onePage(widgetLines), in: dir)
    }

    func testAnImageMarkedForAPlaneDecodes() throws {
        let dir = try SceneFixtures.directory("plane-decodes")
        try Data(svg.utf8).write(to: dir.appendingPathComponent("poster.svg"))
        let yaml = SceneFixtures.onePage(["- {id: a, type: image, path: poster.svg, plane: true}",
                                          "- {id: b, type: image, path: poster.svg}"])
        let loaded = try SceneLoader.parse(data: Data(yaml.utf8), file: "p.yaml", baseDirectory: dir.path)
        guard case .image(let a) = loaded.scene.pages[0].widgets[0].content,
              case .image(let b) = loaded.scene.pages[0].widgets[1].content else { return XCTFail("not images") }
        XCTAssertTrue(a.plane)
        XCTAssertFalse(b.plane)
    }

    func testPlaneMustBeABoolean() throws {
        let (path, lines) = try check(["- id: i", "  type: image", "  path: poster.svg", "  plane: often"])
        XCTAssertEqual(lines.count, 1, lines.joined(separator: "\n"))
        XCTAssertEqual(lines.first.map { $0.hasPrefix("\(path):7:16: pages[0].widgets[0].plane: expected true or false") }, true,
                       lines.first ?? "")
    }

    func testPlaneIsOnlyForImages() throws {
        let (path, lines) = try check(["- id: t", "  type: text", "  text: hi", "  plane: true"])
        XCTAssertEqual(lines.count, 1, lines.joined(separator: "\n"))
        XCTAssertEqual(lines.first.map { $0.hasPrefix("\(path):7:9: pages[0].widgets[0].plane: unknown key 'plane'") }, true,
                       lines.first ?? "")
    }
}
