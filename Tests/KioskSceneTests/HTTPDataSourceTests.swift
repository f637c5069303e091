import Foundation
import KioskScene
import XCTest

/// `data_sources` entries fetched over HTTP: `{http: URL, ...}` and `{rss: URL, ...}`, validated with located
/// errors, and the JSONPath subset they take.
final class HTTPDataSourceTests: XCTestCase {
    private func scene(_ sources: [String], _ test: String = #function) throws -> (path: String, lines: [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        let text = (["data_sources:"] + sources.map { "  " + $0 }).joined(separator: "\n") + "\n" + SceneFixtures.onePage(["- {type: text, text: x}"])
        return try SceneFixtures.check(text, in: dir)
    }

    func testHTTPAndRSSSourcesAreKeptBesideMQTTOnes() throws {
        let (path, lines) = try scene([
            "- {http: 'https://example.com/menu.json', every: 30s, key: soup, json: \"$.menu[0]['dish name']\", headers: {Authorization: Bearer x}}",
            "- {rss: 'http://example.com/feed.xml', key: news, items: 5, summaries: true, every: 5m}",
            "- {http: 'http://example.com/plain.txt', key: motd}",
            "- {mqtt: home/t, key: t}",
        ])
        XCTAssertEqual(lines, ["ok"])
        let scene = try SceneLoader.load(path: path).scene
        XCTAssertEqual(scene.dataSources.map(\.key), ["t"])
        XCTAssertEqual(scene.httpDataSources.map(\.key), ["soup", "news", "motd"])
        let soup = scene.httpDataSources[0]
        XCTAssertEqual(soup.url, "https://example.com/menu.json")
        XCTAssertEqual(soup.every, .seconds(30))
        XCTAssertEqual(soup.headers, ["Authorization": "Bearer x"])
        XCTAssertEqual(soup.kind, .http(json: try JSONPath(parsing: "$.menu[0]['dish name']")))
        XCTAssertEqual(scene.httpDataSources[1].kind, .rss(items: 5, summaries: true))
        XCTAssertEqual(scene.httpDataSources[1].every, .seconds(300))
        XCTAssertEqual(scene.httpDataSources[2].kind, .http(json: nil))
        XCTAssertEqual(scene.httpDataSources[2].every, HTTPDataSource.defaultEvery)
        XCTAssertEqual(soup.location.line, 2)
    }

    func testEachMistakeIsLocated() throws {
        let (path, lines) = try scene([
            "- {http: 'ftp://example.com/a', key: a}",
            "- {http: 'https://example.com/a', key: a, every: 2 weeks}",
            "- {http: 'https://example.com/a', key: a, json: '$.a..b'}",
            "- {rss: 'https://example.com/a', key: a, items: 500}",
            "- {rss: 'https://example.com/a', key: a, json: '$.a'}",
            "- {http: 'https://example.com/a', key: a, every: 0.1s}",
            "- {http: 'https://example.com/a'}",
            "- {http: 'https://example.com/a', key: a, header: {}}",
        ])
        XCTAssertEqual(lines.count, 8, lines.joined(separator: "\n"))
        XCTAssertTrue(lines[0].hasPrefix("\(path):2:12: data_sources[0].http: 'ftp://example.com/a' is not an http:// or https:// URL"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("\(path):3:52: data_sources[1].every: expected an interval"), lines[1])
        XCTAssertTrue(lines[2].hasPrefix("\(path):4:51: data_sources[2].json: '$.a..b' is not a path: expected a member name after '.'"), lines[2])
        XCTAssertTrue(lines[2].contains("at character 5"), lines[2])
        XCTAssertTrue(lines[3].hasPrefix("\(path):5:51: data_sources[3].items: 500 is out of range 1...100"), lines[3])
        XCTAssertTrue(lines[4].hasPrefix("\(path):6:44: data_sources[4].json: unknown key 'json'"), lines[4])
        XCTAssertTrue(lines[5].hasPrefix("\(path):7:52: data_sources[5].every: 0.1s is out of range 1s...24h"), lines[5])
        XCTAssertTrue(lines[6].hasPrefix("\(path):8:5: data_sources[6]: missing 'key'"), lines[6])
        XCTAssertTrue(lines[7].hasPrefix("\(path):9:45: data_sources[7].header: unknown key 'header'; did you mean 'headers'?"), lines[7])
    }

    func testJSONPathSubset() throws {
        XCTAssertEqual(try JSONPath(parsing: "$").steps, [])
        XCTAssertEqual(try JSONPath(parsing: "$.a.b_c[12]['x y'][0]").steps,
                       [.member("a"), .member("b_c"), .index(12), .member("x y"), .index(0)])
        XCTAssertEqual(try JSONPath(parsing: #"$['it\'s']"#).steps, [.member("it's")])
        for (text, message, column) in [("a.b", "a path starts with '$'", 1), ("$.", "expected a member name", 3),
                                        ("$[x]", "expected an index", 3), ("$[1", "expected ']' after the index", 4),
                                        ("$['a", "the quoted name is not closed", 5), ("$a", "expected '.name', '[index]' or ['name'], found 'a'", 2),
                                        ("$[-1]", "expected an index", 3)] {
            XCTAssertThrowsError(try JSONPath(parsing: text), text) { error in
                guard let error = error as? JSONPath.SyntaxError else { return XCTFail("\(error)") }
                XCTAssertTrue(error.message.hasPrefix(message), "\(text): \(error)")
                XCTAssertEqual(error.column, column, "\(text): \(error)")
            }
        }
    }
}
