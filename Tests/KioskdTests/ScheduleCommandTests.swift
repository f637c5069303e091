import Foundation
import KioskTestSupport
import XCTest

/// `kioskd schedule SCENE --from … --to …` as an operator runs it: the pages shown over a range of time in the
/// scene's zone, with no display; a bad range or scene is one clear line and a non-zero exit.
final class ScheduleCommandTests: XCTestCase {
    private func scene(_ test: String = #function) throws -> String {
        let dir = try KioskdProcess.scratchDirectory("schedule-\(test.replacingOccurrences(of: "()", with: ""))")
        let file = dir.appendingPathComponent("scene.yaml")
        try Data("""
            timezone: America/New_York
            fallback: closed
            pages:
              - name: breakfast
                duration: 600
                when: {days: weekdays, from: "06:00", to: "07:00"}
                widgets: [{type: rect}]
              - name: coffee
                duration: 300
                when: {from: "06:30", to: "07:00"}
                widgets: [{type: rect}]
              - name: late
                when: {days: [sat], from: "23:00", to: "03:00"}
                widgets: [{type: rect}]
              - name: closed
                widgets: [{type: rect}]
            """.utf8).write(to: file)
        return file.path
    }

    func testPreviewPrintsEachChangeInTheScenesZone() throws {
        let r = try KioskdProcess.run(["schedule", try scene(), "--from", "2026-03-06T05:50", "--to", "2026-03-06T08:00"], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "2026-03-06 05:50:00 -0500 Fri  closed",
            "2026-03-06 06:00:00 -0500 Fri  breakfast",
            "2026-03-06 06:30:00 -0500 Fri  coffee",
            "2026-03-06 06:35:00 -0500 Fri  breakfast",
            "2026-03-06 06:45:00 -0500 Fri  coffee",
            "2026-03-06 06:50:00 -0500 Fri  breakfast",
            "2026-03-06 07:00:00 -0500 Fri  closed",
        ])
    }

    func testPreviewAcrossTheSpringChangeAsJSON() throws {
        // Saturday 7 March 23:00 EST to Sunday 03:00 EDT: three hours, then the fallback.
        let r = try KioskdProcess.run(["schedule", try scene(), "--from", "2026-03-07T22:00", "--to", "2026-03-08T08:00Z", "--json"], timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = try r.stdout.split(separator: "\n").map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(lines.map { $0?["page"] as? String }, ["closed", "late", "closed"])
        XCTAssertEqual(lines.map { $0?["unix"] as? Double }, [1_772_938_800, 1_772_942_400, 1_772_953_200])
        XCTAssertEqual(lines.map { $0?["start"] as? String }, ["2026-03-07T22:00:00-05:00", "2026-03-07T23:00:00-05:00", "2026-03-08T03:00:00-04:00"])
    }

    /// A playlist whose items have rules: a line each time the items that may play change, between the page lines,
    /// the widget named by its id or its place on the page; in JSON with the sources and their indices.
    func testPlaylistItemRulesAreListedWithThePages() throws {
        let dir = try KioskdProcess.scratchDirectory("schedule-items")
        for name in ["a.mp4", "b.mp4", "c.mp4"] { try Data("x".utf8).write(to: dir.appendingPathComponent(name)) }
        let file = dir.appendingPathComponent("scene.yaml")
        try Data("""
            timezone: Europe/Paris
            pages:
              - name: menu
                widgets:
                  - id: tv
                    type: video
                    playlist:
                      - a.mp4
                      - {source: b.mp4, when: {from: "06:00", to: "11:00"}}
                      - {source: c.mp4, when: {from: "12:00", to: "12:05"}, priority: 10}
                  - type: video
                    playlist: [{source: a.mp4, when: {days: [sat]}}, c.mp4]
            """.utf8).write(to: file)
        let arguments = ["schedule", file.path, "--from", "2026-11-28T05:00", "--to", "2026-11-28T13:00"]
        let r = try KioskdProcess.run(arguments, timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout.split(separator: "\n").map(String.init), [
            "2026-11-28 05:00:00 +0100 Sat  menu",
            "2026-11-28 05:00:00 +0100 Sat  menu video tv: a.mp4",
            "2026-11-28 05:00:00 +0100 Sat  menu video #2: a.mp4, c.mp4",
            "2026-11-28 06:00:00 +0100 Sat  menu video tv: a.mp4, b.mp4",
            "2026-11-28 11:00:00 +0100 Sat  menu video tv: a.mp4",
            "2026-11-28 12:00:00 +0100 Sat  menu video tv: c.mp4",
            "2026-11-28 12:05:00 +0100 Sat  menu video tv: a.mp4",
        ])

        let json = try KioskdProcess.run(arguments + ["--json"], timeout: 60)
        XCTAssertEqual(json.status, 0, json.stderr)
        let lines = try json.stdout.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(lines.count, 7)
        XCTAssertEqual(Set(lines[0].keys), ["start", "unix", "page"], "page lines as before")
        let breakfast = lines[3]
        XCTAssertEqual(breakfast["start"] as? String, "2026-11-28T06:00:00+01:00")
        XCTAssertEqual(breakfast["unix"] as? Double, 1_795_842_000)
        XCTAssertEqual(breakfast["page"] as? String, "menu")
        XCTAssertEqual(breakfast["video"] as? String, "tv")
        XCTAssertEqual((breakfast["items"] as? [String])?.map { URL(fileURLWithPath: $0).lastPathComponent }, ["a.mp4", "b.mp4"])
        XCTAssertEqual(breakfast["item_indices"] as? [Int], [0, 1])
        XCTAssertEqual(lines[5]["item_indices"] as? [Int], [2], "the announcement alone")
        XCTAssertEqual(lines[2]["video"] as? String, "#2")
    }

    func testBadRangeAndBadSceneAreOneClearLine() throws {
        let path = try scene()
        let bad = try KioskdProcess.run(["schedule", path, "--from", "2026-03-06T25:00"], timeout: 60)
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("--from: '2026-03-06T25:00' is not a time; expected YYYY-MM-DD"), bad.stderr)
        let backwards = try KioskdProcess.run(["schedule", path, "--from", "2026-03-07", "--to", "2026-03-06"], timeout: 60)
        XCTAssertNotEqual(backwards.status, 0)
        XCTAssertTrue(backwards.stderr.contains("--to (2026-03-06 00:00:00 -0500 Fri) must come after --from (2026-03-07 00:00:00 -0500 Sat)"), backwards.stderr)
        let missing = try KioskdProcess.run(["schedule", "/nonexistent/scene.yaml"], timeout: 60)
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errorLines, ["/nonexistent/scene.yaml:1:1: scene file not found"])
    }
}
