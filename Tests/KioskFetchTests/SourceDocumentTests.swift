import Foundation
@testable import KioskFetch
import KioskScene
import XCTest

/// JSON and feed documents read into data key values, with errors that say where the document differs.
final class SourceDocumentTests: XCTestCase {
    private let menu = Array(#"{"menu": {"items": [{"name": "soup", "price": 4.5, "count": 3, "vegan": true, "note": null}, {"name": "bread"}]}, "it's": "quoted"}"#.utf8)

    private func value(_ path: String) -> Result<String, FetchFailure> {
        SourceDocument.jsonValue(menu, path: try! JSONPath(parsing: path), contentType: "application/json")
    }

    func testJSONValuesAtPaths() throws {
        XCTAssertEqual(try value("$.menu.items[0].name").get(), "soup")
        XCTAssertEqual(try value("$.menu.items[0].price").get(), "4.5")
        XCTAssertEqual(try value("$.menu.items[0].count").get(), "3")
        XCTAssertEqual(try value("$.menu.items[0].vegan").get(), "true")
        XCTAssertEqual(try value("$.menu.items[0].note").get(), "")
        XCTAssertEqual(try value("$.menu.items[1]").get(), #"{"name":"bread"}"#)
        XCTAssertEqual(try value(#"$['it\'s']"#).get(), "quoted")
        XCTAssertEqual(try SourceDocument.jsonValue(Array(" plain text\n".utf8), path: nil, contentType: nil).get(), "plain text")
    }

    func testJSONErrorsSayWhereTheDocumentDiffers() {
        let cases: [(String, String)] = [
            ("$.menu.itemz", "$.menu has no member 'itemz'; did you mean 'items'? (json: $.menu.itemz)"),
            ("$.menu.items[2]", "$.menu.items has 2 items; [2] is past the end (json: $.menu.items[2])"),
            ("$.menu.items.name", "$.menu.items is an array, not an object with 'name' (json: $.menu.items.name)"),
            ("$.menu[0]", "$.menu is an object, not an array (json: $.menu[0])"),
        ]
        for (path, words) in cases {
            XCTAssertEqual(value(path), .failure(.refused(words)), path)
        }
        let html = SourceDocument.jsonValue(Array("<html><body>maintenance</body></html>".utf8), path: try! JSONPath(parsing: "$.a"), contentType: "text/html")
        XCTAssertEqual(html, .failure(.refused("the response is not JSON (Content-Type text/html): it begins '<html><body>maintenance</body></html>'")))
    }

    func testADeeplyNestedJSONBombIsRefusedNotRecursedInto() {
        let bomb = Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
        guard case .failure(.refused(let words)) = SourceDocument.jsonValue(bomb, path: try! JSONPath(parsing: "$[0]"), contentType: "application/json") else {
            return XCTFail("100,000 nested arrays were read")
        }
        XCTAssertTrue(words.hasPrefix("the response is not JSON (Content-Type application/json): it begins '[[[["), words)
    }

    func testRSSItemsTitlesAndSummaries() throws {
        let rss = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment -->
        <rss version="2.0"><channel><title>Channel, not an item</title>
        <item><title>Trains &amp; buses</title><description><![CDATA[<p>Line <b>4</b> is late</p>]]></description></item>
        <item><title>Caf&#233; opens</title><description>At &lt;i&gt;nine&lt;/i&gt;</description></item>
        <item><title>Third</title></item>
        </channel></rss>
        """
        let source = HTTPDataSource(url: "http://x/feed", key: "news", kind: .rss(items: 2, summaries: true),
                                    location: SourceLocation(file: "s.yaml", line: 1, column: 1))
        let values = try SourceDocument.values(for: source, body: Array(rss.utf8), contentType: "application/rss+xml").get()
        XCTAssertEqual(values, ["news": "Trains & buses • Café opens", "news.count": "2",
                                "news.0.title": "Trains & buses", "news.0.summary": "Line 4 is late",
                                "news.1.title": "Café opens", "news.1.summary": "At nine"])
    }

    func testAtomEntries() throws {
        let atom = """
        <feed xmlns="http://www.w3.org/2005/Atom"><title>Feed</title>
        <entry><title type="text">First</title><summary>One</summary><content>Not this</content></entry>
        <entry><title>Second</title><content type="html">&lt;p&gt;Two&lt;/p&gt;</content></entry>
        </feed>
        """
        let entries = try SourceDocument.feed(Array(atom.utf8), limit: 10, contentType: nil).get()
        XCTAssertEqual(entries, [SourceDocument.FeedEntry(title: "First", summary: "One"), SourceDocument.FeedEntry(title: "Second", summary: "Two")])
    }

    func testWhatIsNotAFeedIsRefusedByName() {
        XCTAssertEqual(SourceDocument.feed(Array("<html><body>x</body></html>".utf8), limit: 5, contentType: "text/html"),
                       .failure(.refused("the response is not an RSS or Atom feed: its root element is <html> (Content-Type text/html)")))
        XCTAssertEqual(SourceDocument.feed(Array("<rss><channel><item><title>x".utf8), limit: 5, contentType: nil), .success([]))
        guard case .failure(.refused(let words)) = SourceDocument.feed(Array("<rss><item><title a='1".utf8), limit: 5, contentType: nil) else {
            return XCTFail("an unclosed tag was read")
        }
        XCTAssertTrue(words.hasPrefix("the feed is not well-formed XML: a tag is not closed"), words)
    }

    func testEntitiesOfADoctypeAreNotExpanded() throws {
        // A billion-laughs document: the internal subset is skipped, &lol9; stays as it is.
        var doctype = "<!DOCTYPE rss [<!ENTITY lol \"lol\">"
        for i in 1...9 { doctype += "<!ENTITY lol\(i) \"" + String(repeating: "&lol\(i == 1 ? "" : String(i - 1));", count: 10) + "\">" }
        doctype += "]>"
        let body = doctype + "<rss><channel><item><title>&lol9;</title></item></channel></rss>"
        let entries = try SourceDocument.feed(Array(body.utf8), limit: 5, contentType: nil).get()
        XCTAssertEqual(entries.map(\.title), ["&lol9;"])
    }
}

final class FetchBackoffTests: XCTestCase {
    func testEachURLBacksOffOnItsOwnAndASuccessResetsIt() {
        // A draw of 0.5 is the step itself, without jitter.
        var backoff = FetchBackoff(initial: .seconds(1), maximum: .seconds(5), random: { 0.5 })
        XCTAssertEqual([backoff.failed("a"), backoff.failed("a"), backoff.failed("a"), backoff.failed("a")],
                       [.seconds(1), .seconds(2), .seconds(4), .seconds(5)])
        XCTAssertEqual(backoff.failed("b"), .seconds(1), "another URL starts from the first step")
        XCTAssertEqual(backoff.failures("a"), 4)
        backoff.succeeded("a")
        XCTAssertEqual(backoff.failures("a"), 0)
        XCTAssertEqual(backoff.failed("a"), .seconds(1))
    }
}
