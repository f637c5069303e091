import Foundation
import KioskTestSupport
import XCTest

/// A scene's HTTP JSON source and RSS feed, bound into a text widget and a ticker, through a headless kioskd: the
/// values shown, a change on the server shown, the server gone with the last values kept, and `stats` saying so.
final class HTTPDataSourceTests: XCTestCase {
    func testAJSONSourceAndAFeedAreShownAndKeptWhenTheServerGoes() throws {
        let server = try FaultServer("daemon-sources")
        try server.write("menu.json", #"{"today": [{"dish": "tomato soup"}]}"#)
        try server.write("feed.xml", "<rss><channel><item><title>Line 4 late</title></item><item><title>Market open</title></item></channel></rss>")
        let scene = server.directory.appendingPathComponent("scene.yaml")
        try Data("""
        data_sources:
          - {http: '\(server.url("/files/menu.json"))', every: 1s, key: dish, json: "$.today[0].dish"}
          - {rss: '\(server.url("/files/feed.xml"))', every: 1s, key: news, items: 5}
        pages:
          - name: main
            widgets:
              - {id: dish, type: text, text: "Today: {dish}", x: 0, y: 0, width: 320, height: 40}
              - {id: news, type: ticker, text: "{news}", x: 0, y: 200, width: 320, height: 40}

        """.utf8).write(to: scene)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path])
        var stopped = false
        defer { if !stopped { _ = daemon.stop() } }
        func shown(_ id: String) throws -> String? { try daemon.result("widget.get", #"{"id": "\#(id)"}"#)["shown_text"] as? String }

        try Poll.until("the dish shown", reading: { try shown("dish") }, satisfies: { $0 == "Today: tomato soup" })
        XCTAssertTrue(try Self.mapsLibcurl(daemon.pid), "libcurl is loaded once a scene has an HTTP source")
        // The feed is a fetch of its own, which may land a moment after the JSON's.
        try Poll.until("the feed's titles in the data", reading: {
            try daemon.result("data.get", #"{"keys": ["news", "news.count"]}"#)["values"] as? [String: String]
        }, satisfies: { $0 == ["news": "Line 4 late • Market open", "news.count": "2"] })

        try server.write("menu.json", #"{"today": [{"dish": "leek pie"}]}"#)
        try Poll.until("the new dish shown", reading: { try shown("dish") }, satisfies: { $0 == "Today: leek pie" })

        server.stop()
        let stale = try Poll.until("the source counted as failing in stats", reading: {
            (try daemon.result("stats")["data_sources"] as? [[String: Any]]) ?? []
        }, satisfies: { sources in sources.first { $0["key"] as? String == "dish" }?["stale_since"] is Double })
        let dish = try XCTUnwrap(stale.first { $0["key"] as? String == "dish" })
        XCTAssertEqual(dish["url"] as? String, server.url("/files/menu.json"))
        XCTAssertEqual((dish["failures"] as? [String: Int])?["transfer"].map { $0 > 0 }, true, "\(dish)")
        XCTAssertTrue((dish["last_error"] as? String)?.hasPrefix("GET \(server.url("/files/menu.json")): ") ?? false, "\(dish)")
        XCTAssertNotNil(dish["last_success"] as? Double)
        XCTAssertEqual(try shown("dish"), "Today: leek pie", "the last value is kept")
        stopped = true
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("data source 'dish'"), "failures are logged, naming the source")
    }

    func testAKioskWithoutHTTPSourcesNeverLoadsLibcurl() throws {
        let folder = try KioskdProcess.scratchDirectory("daemon-no-sources")
        let scene = folder.appendingPathComponent("scene.yaml")
        try Data("widgets:\n  - {id: t, type: text, text: \"{x}\", x: 0, y: 0, width: 100, height: 40}\n".utf8).write(to: scene)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path])
        _ = try daemon.result("data.set", #"{"values": {"x": "y"}}"#)
        XCTAssertFalse(try Self.mapsLibcurl(daemon.pid), "libcurl (and OpenSSL with it) is opened only for a fetch")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    /// Whether kioskd has libcurl mapped. procfs files report a size of 0: read to the end, not by the size.
    private static func mapsLibcurl(_ pid: Int32) throws -> Bool {
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { throw CocoaError(.fileReadNoPermission) }
        defer { try? file.close() }
        let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(maps.contains("/kioskd"), "the maps read are kioskd's")
        return maps.contains("libcurl.so")
    }
}
