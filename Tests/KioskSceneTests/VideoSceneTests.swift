import Foundation
import KioskCore
import KioskScene
import XCTest

/// The `video` widget's keys and `duration: video`: what decodes, and each mistake as one located line.
/// Widget keys start in column 9; the first widget's `type` is on line 5.
final class VideoSceneTests: XCTestCase {
    private func check(_ widgetLines: [String], _ test: String = #function, pageLines: [String] = []) throws -> (String, [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        try Data("not really a video".utf8).write(to: dir.appendingPathComponent("clip.mp4"))
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("folder.mp4"), withIntermediateDirectories: true)
        let text = (["pages:", "  - name: main"] + pageLines.map { "    " + $0 } + ["    widgets:"] + widgetLines.map { "      " + $0 })
            .joined(separator: "\n") + "\n"
        return try SceneFixtures.check(text, in: dir)
    }

    private func assertOneLine(_ result: (String, [String]), _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let (path, lines) = result
        XCTAssertEqual(lines.count, 1, lines.joined(separator: "\n"), file: file, line: line)
        XCTAssertTrue(lines.first?.hasPrefix("\(path):\(expected)") == true, "got: \(lines.first ?? "nothing")\nwanted prefix: \(path):\(expected)",
                      file: file, line: line)
    }

    func testAVideoWidgetDecodesWithItsDefaults() throws {
        let dir = try SceneFixtures.directory("video-decodes")
        try Data("x".utf8).write(to: dir.appendingPathComponent("a.mp4"))
        let yaml = """
        pages:
          - name: one
            duration: video
            widgets:
              - {id: v, type: video, playlist: [a.mp4, "http://example.com/b.webm"], fit: cover, muted: false, volume: 0.5}
          - name: two
            widgets:
              - {id: w, type: video, source: a.mp4}
        """
        let loaded = try SceneLoader.parse(data: Data(yaml.utf8), file: "v.yaml", baseDirectory: dir.path)
        XCTAssertTrue(loaded.scene.pages[0].advancesAfterVideo)
        XCTAssertNil(loaded.scene.pages[0].duration)
        guard case .video(let v) = loaded.scene.pages[0].widgets[0].content, case .video(let w) = loaded.scene.pages[1].widgets[0].content else {
            return XCTFail("not video widgets")
        }
        XCTAssertEqual(v.sources, [dir.appendingPathComponent("a.mp4").path, "http://example.com/b.webm"])
        XCTAssertEqual(v.fit, .cover)
        XCTAssertFalse(v.muted)
        XCTAssertEqual(v.volume, 0.5)
        XCTAssertEqual(w, VideoProperties(sources: [dir.appendingPathComponent("a.mp4").path], loop: true, fit: .contain, muted: true,
                                          volume: 1, placeholder: nil))
    }

    func testAMissingClipIsNamed() throws {
        assertOneLine(try check(["- id: v", "  type: video", "  source: nope.mp4"]),
                      "6:17: pages[0].widgets[0].source: video 'nope.mp4' not found")
        assertOneLine(try check(["- id: v", "  type: video", "  playlist: [clip.mp4, gone.webm]"], "playlist"),
                      "6:30: pages[0].widgets[0].playlist[1]: video 'gone.webm' not found")
        assertOneLine(try check(["- id: v", "  type: video", "  source: folder.mp4"], "folder"),
                      "6:17: pages[0].widgets[0].source: video 'folder.mp4' is a directory")
    }

    func testSourceOrPlaylistNotBothNorNeither() throws {
        assertOneLine(try check(["- id: v", "  type: video"]), "4:9: pages[0].widgets[0]: a video widget needs 'source'")
        assertOneLine(try check(["- id: v", "  type: video", "  source: clip.mp4", "  playlist: [clip.mp4]"], "both"),
                      "7:9: pages[0].widgets[0].playlist: give 'source' (one clip) or 'playlist' (clips in turn), not both")
        assertOneLine(try check(["- id: v", "  type: video", "  playlist: []"], "empty"),
                      "6:19: pages[0].widgets[0].playlist: expected a list of at least one clip")
    }

    func testBadValuesAndUnknownKeys() throws {
        assertOneLine(try check(["- id: v", "  type: video", "  source: clip.mp4", "  fit: stretch"]),
                      "7:14: pages[0].widgets[0].fit: 'stretch' is not one of contain, cover, fill")
        assertOneLine(try check(["- id: v", "  type: video", "  source: clip.mp4", "  volume: 2"], "volume"),
                      "7:17: pages[0].widgets[0].volume: 2 is out of range 0...1")
        assertOneLine(try check(["- id: v", "  type: video", "  source: clip.mp4", "  loops: true"], "unknown"),
                      "7:9: pages[0].widgets[0].loops: unknown key 'loops'")
        assertOneLine(try check(["- id: v", "  type: video", "  source: \"://nowhere\""], "scheme"),
                      "6:17: pages[0].widgets[0].source: '://nowhere' is not a URI")
    }

    func testDurationVideoNeedsAVideoOnThePage() throws {
        assertOneLine(try check(["- id: r", "  type: rect"], pageLines: ["duration: video"]),
                      "3:15: pages[0].duration: 'duration: video' needs a video widget on the page")
        assertOneLine(try check(["- id: r", "  type: rect"], "word", pageLines: ["duration: forever"]),
                      "3:15: pages[0].duration: expected seconds (0.1...86400) or 'video'")
    }
}
