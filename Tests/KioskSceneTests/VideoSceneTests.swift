import Foundation
import KioskCore
import KioskScene
import XCTest

/// The `video` widget's keys and `duration: video`: what decodes, and each mistake as one located line.
/// Widget keys start in column 9; the first widget's `type` is on line 5.
final class VideoSceneTests: XCTestCase {
    private func check(_ widgetLines: [String], _ test: String = #function, pageLines: [String] = [],
                       limits: SceneLimits = SceneLimits()) throws -> (String, [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        try Data("not really a video".utf8).write(to: dir.appendingPathComponent("clip.mp4"))
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("folder.mp4"), withIntermediateDirectories: true)
        let text = (["pages:", "  - name: main"] + pageLines.map { "    " + $0 } + ["    widgets:"] + widgetLines.map { "      " + $0 })
            .joined(separator: "\n") + "\n"
        return try SceneFixtures.check(text, in: dir, limits: limits)
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

    /// `video.allowed_schemes` (file, https, http by default) holds for a widget's `source` and each `playlist`
    /// entry, in any case of the scheme, with the scheme and the list named.
    func testASchemeOutsideTheAllowedListIsNamed() throws {
        let list = "(video.allowed_schemes: file, https, http)"
        assertOneLine(try check(["- id: v", "  type: video", "  source: rtsp://camera.lan/stream"]),
                      "6:17: pages[0].widgets[0].source: video 'rtsp://camera.lan/stream': scheme 'rtsp' is not allowed \(list)")
        assertOneLine(try check(["- id: v", "  type: video", "  playlist: [clip.mp4, \"V4L2:///dev/video0\"]"], "playlist"),
                      "6:30: pages[0].widgets[0].playlist[1]: video 'V4L2:///dev/video0': scheme 'v4l2' is not allowed \(list)")
        assertOneLine(try check(["- id: v", "  type: video", "  source: \"data:video/mp4;base64,AAAA\""], "data"),
                      "6:17: pages[0].widgets[0].source: video 'data:video/mp4;base64,AAAA': scheme 'data' is not allowed \(list)")
        assertOneLine(try check(["- id: v", "  type: video", "  source: clip.mp4"], "onlyweb", limits: SceneLimits(videoSchemes: VideoSchemes(["https"]))),
                      "6:17: pages[0].widgets[0].source: video 'clip.mp4': scheme 'file' is not allowed (video.allowed_schemes: https)")
    }

    func testAnAllowedListDecidesAndAFileURIIsAFile() throws {
        let dir = try SceneFixtures.directory("video-schemes-allowed")
        try Data("x".utf8).write(to: dir.appendingPathComponent("a.mp4"))
        let fileURI = "FILE://" + dir.appendingPathComponent("a.mp4").path
        let yaml = "widgets:\n  - {id: v, type: video, playlist: [\"\(fileURI)\", \"rtsp://camera.lan/stream\", \"HTTPS://cdn/a.webm\"]}\n"
        let limits = SceneLimits(videoSchemes: VideoSchemes(["file", "rtsp", "https"]))
        let loaded = try SceneLoader.parse(data: Data(yaml.utf8), file: "v.yaml", baseDirectory: dir.path, limits: limits)
        guard case .video(let v) = loaded.scene.pages[0].widgets[0].content else { return XCTFail("not a video widget") }
        XCTAssertEqual(v.sources, [fileURI, "rtsp://camera.lan/stream", "HTTPS://cdn/a.webm"])
        assertOneLine(try check(["- id: v", "  type: video", "  source: \"file:///nowhere/gone.mp4\""], "fileuri"),
                      "6:17: pages[0].widgets[0].source: video 'file:///nowhere/gone.mp4' not found (looked for /nowhere/gone.mp4)")
    }
}
