import Foundation
import KioskCore
@testable import KioskRuntime
import XCTest

/// Page ranges on the manual clock: a timed loop keeps surfaces only for the shown page and the next ones,
/// renders each purged page again before its timed change, and `page.show` to a purged page shows it once rendered.
final class PageRangeTests: XCTestCase {
    /// `count` timed pages, each a full-screen colour with a headline.
    private func loop(_ count: Int, seconds: Double, preload: Int? = nil) -> String {
        let colours = ["#aa2020", "#20aa20", "#2020aa", "#aaaa20", "#20aaaa", "#aa20aa"]
        let pages = (0..<count).map { i in
            """
              - name: p\(i)
                duration: \(seconds)
                transition: {type: fade, duration: 0.25}
                widgets:
                  - {type: rect, background: "\(colours[i % colours.count])", x: 0, y: 0, width: 100%, height: 100%}
                  - {type: text, text: "Page \(i)", x: 20, y: 20, width: 200, height: 40}
            """
        }
        return "size: display\npages:\n" + pages.joined(separator: "\n") + "\n"
    }

    private func pageLayer(_ h: StageHarness, _ name: String) throws -> Layer {
        func find(_ layer: Layer) -> Layer? {
            if layer.name == "page \(name)" { return layer }
            for child in layer.children { if let found = find(child) { return found } }
            return nil
        }
        return try XCTUnwrap(find(h.engine.rootLayer), "page \(name)")
    }

    func testTimedLoopKeepsTheShownAndNextPageAndRendersEveryPageBeforeItsChange() throws {
        let h = try StageHarness(yaml: loop(8, seconds: 1), size: Size(width: 320, height: 240))
        h.settle()
        XCTAssertEqual(Set(h.stats.surfaces.byRoot.keys), ["p0", "p1"], "pages out of range never rendered")
        var changes: [String] = []
        h.listeners.append(h.stage.addEventListener { event in
            guard case .pageShown(let name) = event, let layer = try? self.pageLayer(h, name) else { return }
            changes.append(name)
            XCTAssertFalse(h.engine.isPurged(layer), "\(name) was restored before its timed change")
            XCTAssertFalse(h.engine.isRendering(layer), "\(name) was rendered before its timed change")
        })
        h.run(for: .milliseconds(16_500))  // two rounds
        XCTAssertEqual(changes.count, 16)
        XCTAssertEqual(h.stats.pageReadyMs.count, 0, "no timed change waited for its page")
        XCTAssertGreaterThanOrEqual(h.stats.surfaces.purges, 14)
        XCTAssertEqual(Set(h.stats.surfaces.byRoot.keys), [h.stage.currentPage, "p\((Int(h.stage.currentPage.dropFirst())! + 1) % 8)"])
        XCTAssertEqual(h.stats.rendersFailed, 0)
    }

    func testWithoutPreloadEachPageIsRenderedAheadByItsMeasuredRenderTime() throws {
        let h = try StageHarness(yaml: loop(4, seconds: 2), size: Size(width: 320, height: 240))
        h.stage.preloadPages = 0
        h.settle()
        var late: [String] = []
        h.listeners.append(h.stage.addEventListener { event in
            guard case .pageShown(let name) = event, let layer = try? self.pageLayer(h, name) else { return }
            if h.engine.isPurged(layer) || h.engine.isRendering(layer) { late.append(name) }
        })
        h.run(for: .milliseconds(8_100))  // a round: every page restored and measured once
        h.run(for: .milliseconds(1_000))  // the middle of a page in the second round
        XCTAssertEqual(Set(h.stats.surfaces.byRoot.keys), [h.stage.currentPage], "only the shown page holds surfaces")
        h.run(for: .milliseconds(7_000))
        XCTAssertEqual(late, [], "every page was rendered before its timed change")
        XCTAssertEqual(h.stats.pageReadyMs.count, 0)
    }

    func testShowingAPurgedPageRendersItFirstThenShowsItWhole() throws {
        let h = try StageHarness(yaml: loop(6, seconds: 30), size: Size(width: 320, height: 240))
        h.settle()
        let p4 = try pageLayer(h, "p4")
        XCTAssertTrue(h.engine.isPurged(p4))
        XCTAssertEqual(try h.pixel(x: 300, y: 200), 0xAA2020)
        try h.stage.showPage("p4", transition: .cut)
        // Its renders are dispatched, not run: the page on screen stays.
        h.loop.runOnce(timeout: .zero)
        XCTAssertTrue(h.engine.isRendering(p4))
        h.run(for: .milliseconds(50))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 300, y: 200), 0x20AAAA)
        XCTAssertEqual(h.stats.pageReadyMs.count, 1)
        XCTAssertGreaterThanOrEqual(h.stats.surfaces.rerenders, 2)
    }

    func testRangeKeepsTheNextPagesAndThoseThatComeUpSoonerThanTheyRender() {
        let pages = (0..<6).map { PageRange.Page(name: "p\($0)", duration: 10) } + [PageRange.Page(name: "menu", duration: nil)]
        // Untimed pages are always kept; the next page by preload; p3 renders in 9 s and comes up in 15 s + 10 s.
        var d = PageRange.decide(pages, current: "p0", remaining: 5, preload: 1, transition: [], renderSeconds: ["p3": 9])
        XCTAssertEqual(d.keep, ["p0", "p1", "menu"])
        // p3 (shown in 5 + 10 + 10 s) needs 2 x 9 s + a frame: decided again when that much is left.
        XCTAssertEqual(d.recheckAfter ?? 0, 25 - (2 * 9 + PageRange.margin), accuracy: 1e-9)
        // Slow p3 comes up within twice its render time: rendered ahead beyond the preload.
        d = PageRange.decide(pages, current: "p1", remaining: 2, preload: 1, transition: [], renderSeconds: ["p3": 9])
        XCTAssertEqual(d.keep, ["p1", "p2", "p3", "menu"])
        // A transition keeps both of its pages; no timed change, no pages ahead.
        d = PageRange.decide(pages, current: "menu", remaining: nil, preload: 1, transition: ["menu", "p4"], renderSeconds: [:])
        XCTAssertEqual(d.keep, ["menu", "p4"])
        XCTAssertNil(d.recheckAfter)
    }
}
