import Foundation
import KioskRuntime
import KioskScene
import XCTest

/// The built-in diagnostic page is a valid bundled scene whose data keys carry the problem.
final class DiagnosticPageSceneTests: XCTestCase {
    func testThePageCarriesEveryLocatedErrorAndTheDetails() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("diagnostic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.yaml")
        let widgets = (0..<10).map { "      - {id: w\($0), type: hologram}" }.joined(separator: "\n")
        try "pages:\n  - name: p\n    widgets:\n\(widgets)\n".write(to: file, atomically: true, encoding: .utf8)
        var caught: (any Error)?
        do { _ = try SceneLoader.load(path: file.path) } catch { caught = error }
        let scene = try DiagnosticPage.scene(for: .scene(file.path), error: try XCTUnwrap(caught), version: "9.9.9", socket: "/run/x.sock")
        XCTAssertEqual(scene.data["version"], "9.9.9")
        XCTAssertEqual(scene.data["socket"], "/run/x.sock")
        XCTAssertEqual(scene.data["file"], file.path)
        XCTAssertEqual(scene.data["file_label"], "Scene file")
        let lines = try XCTUnwrap(scene.data["problem"]).split(separator: "\n")
        XCTAssertEqual(lines.count, 9, "eight errors and a line counting the rest")
        XCTAssertTrue(lines[0].hasPrefix("\(file.path):4:"), String(lines[0]))
        XCTAssertEqual(lines.last, "… and 2 more (kioskd check shows them all)")
        let shown = scene.allWidgets.compactMap { widget -> String? in
            if case .text(let p) = widget.content { return p.text.render(scene.data) } else { return nil }
        }.joined(separator: "\n")
        for value in [String(lines[0]), "9.9.9", "/run/x.sock", "Scene file: \(file.path)", "it is reloaded when saved"] {
            XCTAssertTrue(shown.contains(value), "the page shows \(value):\n\(shown)")
        }
    }
}
