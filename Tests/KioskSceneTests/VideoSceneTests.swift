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
        XCTAssertFalse(loaded.scene.hasSchedule)
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

    /// A playlist entry is a clip or `{source, when, priority}`, with the rules of pages' `when:`.
    func testPlaylistItemsTakeRulesAndAPriority() throws {
        let dir = try SceneFixtures.directory("video-item-rules")
        for name in ["a.mp4", "b.mp4"] { try Data("x".utf8).write(to: dir.appendingPathComponent(name)) }
        let yaml = """
        timezone: Europe/Paris
        unsynchronized: schedule
        pages:
          - name: one
            widgets:
              - id: v
                type: video
                playlist:
                  - a.mp4
                  - {source: b.mp4, when: {days: weekdays, from: "06:00", to: "11:00"}}
                  - source: "http://example.com/noon.webm"
                    when: [{from: "12:00", to: "12:05"}, {dates: ["2026-12-24"]}]
                    priority: 10
              - {id: w, type: video, playlist: [a.mp4, b.mp4]}
        """
        let loaded = try SceneLoader.parse(data: Data(yaml.utf8), file: "v.yaml", baseDirectory: dir.path)
        guard case .video(let v) = loaded.scene.pages[0].widgets[0].content,
              case .video(let w) = loaded.scene.pages[0].widgets[1].content else { return XCTFail("not video widgets") }
        XCTAssertEqual(v.sources, [dir.appendingPathComponent("a.mp4").path, dir.appendingPathComponent("b.mp4").path, "http://example.com/noon.webm"])
        XCTAssertEqual(v.items.map(\.rules.count), [0, 1, 2])
        XCTAssertEqual(v.items[1].rules, [DaypartRule(days: [.mon, .tue, .wed, .thu, .fri], from: TimeOfDay(hour: 6, minute: 0),
                                                      to: TimeOfDay(hour: 11, minute: 0))])
        XCTAssertEqual(v.items[2].rules[1].dates.map(\.description), ["2026-12-24"])
        XCTAssertEqual(v.items.map(\.priority), [0, 0, 10])
        XCTAssertTrue(v.isScheduled)
        XCTAssertFalse(w.isScheduled, "plain clips have no schedule")
        XCTAssertTrue(loaded.scene.hasSchedule, "items' rules alone: the clock's synchronization matters")
        let schedule = v.playlistSchedule(timeZone: loaded.scene.scheduleZone(), unsynchronized: loaded.scene.unsynchronized)
        XCTAssertEqual(schedule.timeZone.identifier, "Europe/Paris")
        XCTAssertEqual(schedule.unsynchronized, .schedule)
        XCTAssertEqual(schedule.entries.map(\.priority), [0, 0, 10])
    }

    /// Each mistake in a playlist item is one line at its place, unknown keys with the near match.
    func testPlaylistItemMistakesAreLocated() throws {
        func item(_ text: String) -> [String] { ["- id: v", "  type: video", "  playlist:", "    - " + text] }
        let at = "7:"
        assertOneLine(try check(item("{source: clip.mp4, wen: {from: \"06:00\"}}"), "near"),
                      "\(at)32: pages[0].widgets[0].playlist[0].wen: unknown key 'wen'; did you mean 'when'?")
        assertOneLine(try check(item("{when: {from: \"06:00\"}}"), "nosource"),
                      "\(at)13: pages[0].widgets[0].playlist[0]: a playlist item needs 'source' (a file or URI)")
        assertOneLine(try check(item("{source: gone.mp4, when: {from: \"06:00\"}}"), "gone"),
                      "\(at)22: pages[0].widgets[0].playlist[0].source: video 'gone.mp4' not found")
        assertOneLine(try check(item("{source: clip.mp4, when: {from: \"25:00\"}}"), "time"),
                      "\(at)45: pages[0].widgets[0].playlist[0].when.from: expected a time of day from 00:00 to 23:59")
        assertOneLine(try check(item("{source: clip.mp4, when: {frm: \"06:00\"}}"), "rulekey"),
                      "\(at)39: pages[0].widgets[0].playlist[0].when.frm: unknown key 'frm'; did you mean 'from'?")
        assertOneLine(try check(item("{source: clip.mp4, when: []}"), "emptyrules"),
                      "\(at)38: pages[0].widgets[0].playlist[0].when: give at least one rule")
        assertOneLine(try check(item("{source: clip.mp4, when: [{days: [mon]}, {days: [funday]}]}"), "day"),
                      "\(at)62: pages[0].widgets[0].playlist[0].when[1].days[0]: 'funday' is not one of")
        assertOneLine(try check(item("{source: clip.mp4, priority: 5000}"), "priority"),
                      "\(at)42: pages[0].widgets[0].playlist[0].priority: 5000 is out of range -1000...1000")
        assertOneLine(try check(item("[clip.mp4]"), "list"),
                      "\(at)13: pages[0].widgets[0].playlist[0]: expected a string")
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
