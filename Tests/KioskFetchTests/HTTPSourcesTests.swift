import Foundation
import KioskCore
@testable import KioskFetch
import KioskScene
import KioskTestSupport
import XCTest

/// A scene's HTTP and RSS sources run against the fault server: values set, 304s, failures counted with the last
/// values kept and marked stale.
final class HTTPSourcesTests: XCTestCase {
    private var loop: MainLoop!
    private var fetcher: Fetcher!
    private var data: [String: String] = [:]
    private var errors: [String] = []
    private var sources: HTTPSources!

    override func setUpWithError() throws {
        loop = try MainLoop.epoll()
        fetcher = try Fetcher(loop: loop)
        sources = HTTPSources(fetcher: fetcher, loop: loop, setData: { [unowned self] in self.data.merge($0) { $1 } },
                              onError: { [unowned self] _, words in self.errors.append(words) })
    }

    override func tearDown() {
        sources = nil
        fetcher = nil
        loop = nil
    }

    private func source(_ url: String, key: String, json: String? = nil, every: Duration = .seconds(1),
                        kind: HTTPDataSource.Kind? = nil) throws -> HTTPDataSource {
        HTTPDataSource(url: url, key: key, every: every, kind: try kind ?? .http(json: json.map { try JSONPath(parsing: $0) }),
                       location: SourceLocation(file: "s.yaml", line: 1, column: 1))
    }

    private func status(_ key: String) -> HTTPSources.Status? { sources.statuses.first { $0.key == key } }

    func testAJSONValueIsSetRevalidatedAndUpdated() throws {
        let server = try FaultServer("sources-json")
        try server.write("menu.json", #"{"menu": [{"dish": "soup"}]}"#)
        sources.setSources([try source(server.url("/files/menu.json"), key: "dish", json: "$.menu[0].dish")])
        try Poll.until("the dish set", timeout: 10, turning: loop) { self.data["dish"] == "soup" }
        XCTAssertEqual(data["dish.stale"], "false")
        try Poll.until("a revalidation answered 304", timeout: 10, turning: loop) { (self.status("dish")?.notModified ?? 0) >= 1 }
        XCTAssertEqual(server.requests("/files/menu.json", status: 304), status("dish")?.notModified)

        try server.write("menu.json", #"{"menu": [{"dish": "leek pie"}]}"#)
        try Poll.until("the new dish", timeout: 10, turning: loop) { self.data["dish"] == "leek pie" }
        XCTAssertNotNil(status("dish")?.lastSuccess)
        XCTAssertEqual(status("dish")?.failures, [:])
    }

    func testAFailingSourceKeepsItsValueMarkedStaleAndCountsReasons() throws {
        let server = try FaultServer("sources-fail")
        try server.write("v.json", #"{"v": 1}"#)
        sources.setSources([try source(server.url("/files/v.json"), key: "v", json: "$.v")])
        try Poll.until("v set", timeout: 10, turning: loop) { self.data["v"] == "1" }

        // The document goes away (404), then comes back as HTML in place of JSON.
        try FileManager.default.removeItem(at: server.directory.appendingPathComponent("v.json"))
        try Poll.until("a 404 counted", timeout: 10, turning: loop) { self.status("v")?.failures["http_404"] != nil }
        XCTAssertEqual(data["v"], "1", "the last value is kept")
        XCTAssertEqual(data["v.stale"], "true")
        let stale = try XCTUnwrap(status("v")?.staleSince)
        XCTAssertTrue(errors.last?.hasPrefix("GET \(server.url("/files/v.json")): HTTP status 404") ?? false, "\(errors)")

        try server.write("v.json", "<html>maintenance</html>")
        try Poll.until("a refused document counted", timeout: 10, turning: loop) { self.status("v")?.failures["refused"] != nil }
        XCTAssertEqual(status("v")?.staleSince, stale, "stale since the first failure")
        XCTAssertTrue(status("v")?.lastError?.contains("is not JSON") ?? false, status("v")?.lastError ?? "")

        try server.write("v.json", #"{"v": 2}"#)
        try Poll.until("v back", timeout: 15, turning: loop) { self.data["v"] == "2" }
        XCTAssertEqual(data["v.stale"], "false")
        XCTAssertNil(status("v")?.staleSince)
    }

    func testHostileResponsesAreRefusedAndCounted() throws {
        let server = try FaultServer("sources-hostile")
        sources.setSources([
            try source(server.url("/gzip-bomb"), key: "bomb", every: .seconds(60)),
            try source(server.url("/status/500"), key: "down", every: .seconds(60)),
            try source(server.url("/wrong-type"), key: "feed", every: .seconds(60), kind: .rss(items: 3, summaries: false)),
        ])
        try Poll.until("all three failed", timeout: 20, turning: loop) {
            self.sources.statuses.allSatisfy { !$0.failures.isEmpty }
        }
        // Each retried after 1 s, 2 s, ... while the others run: the reasons are what holds, not the counts.
        XCTAssertEqual(status("bomb")?.failures.keys.sorted(), ["decompressed_too_large"])
        XCTAssertEqual(status("down")?.failures.keys.sorted(), ["http_500"])
        XCTAssertEqual(status("feed")?.failures.keys.sorted(), ["refused"])
        XCTAssertTrue(status("feed")?.lastError?.contains("not an RSS or Atom feed: its root element is <html> (Content-Type text/html)") ?? false,
                      status("feed")?.lastError ?? "")
        XCTAssertNil(data["bomb"])
        XCTAssertEqual(data["down.stale"], "true")
    }

    func testAFeedThatShrinksBlanksTheItemsItLost() throws {
        let server = try FaultServer("sources-rss")
        func feed(_ titles: [String]) -> String {
            "<rss><channel>" + titles.map { "<item><title>\($0)</title></item>" }.joined() + "</channel></rss>"
        }
        try server.write("feed.xml", feed(["a", "b", "c"]))
        sources.setSources([try source(server.url("/files/feed.xml"), key: "news", kind: .rss(items: 10, summaries: false))])
        try Poll.until("three items", timeout: 10, turning: loop) { self.data["news.count"] == "3" }
        XCTAssertEqual(data["news"], "a • b • c")
        try server.write("feed.xml", feed(["d"]))
        try Poll.until("one item", timeout: 10, turning: loop) { self.data["news.count"] == "1" }
        XCTAssertEqual(data["news.0.title"], "d")
        XCTAssertEqual(data["news.2.title"], "")
    }
}
