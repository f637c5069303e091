import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// Pages: `page.show` with cut, fade and slide transitions, and timed pages that loop.
final class PageTests: XCTestCase {
    static let twoPages = """
        size: display
        pages:
          - name: red
            widgets:
              - {id: a, type: rect, background: "#ff0000"}
          - name: blue
            transition: {type: fade, duration: 0.5}
            widgets:
              - {id: b, type: rect, background: "#0000ff"}
        """

    func testCutShowsTheNewPageInOneFrame() throws {
        let h = try StageHarness(yaml: Self.twoPages)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10), 0xFF0000)
        try h.stage.showPage("blue", transition: .cut)
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10), 0x0000FF)
        XCTAssertEqual(h.stage.currentPage, "blue")
    }

    func testFadeBlendsThenEndsOnTheNewPage() throws {
        let h = try StageHarness(yaml: Self.twoPages)
        h.settle()
        try h.stage.showPage("blue", transition: nil)  // the page's own: fade, 0.5 s
        h.run(for: .milliseconds(250))
        let mid = try h.pixel(x: 10, y: 10)
        let r = (mid >> 16) & 0xFF, b = mid & 0xFF
        XCTAssertTrue(r > 40 && b > 40, "half-way through a fade both pages show: \(String(mid, radix: 16))")
        h.run(for: .milliseconds(400))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 10, y: 10), 0x0000FF)
    }

    func testSlideLeftMovesBothPages() throws {
        let h = try StageHarness(yaml: Self.twoPages)
        h.settle()
        try h.stage.showPage("blue", transition: Transition(kind: .slideLeft, duration: 1, easing: .linear))
        h.run(for: .milliseconds(500))
        XCTAssertEqual(try h.pixel(x: 100, y: 10), 0xFF0000, "the outgoing page still covers the left part")
        XCTAssertEqual(try h.pixel(x: 1000, y: 10), 0x0000FF, "the incoming page comes in from the right")
        h.run(for: .milliseconds(700))
        h.settle()
        XCTAssertEqual(try h.pixel(x: 100, y: 10), 0x0000FF)
    }

    func testUnknownPageIsNotFoundAndChangesNothing() throws {
        let h = try StageHarness(yaml: Self.twoPages)
        XCTAssertThrowsError(try h.stage.showPage("green", transition: nil)) { error in
            XCTAssertEqual((error as? StageError)?.code, .notFound)
            XCTAssertTrue("\(error)".contains("green") && "\(error)".contains("red, blue"), "\(error)")
        }
        XCTAssertEqual(h.stage.currentPage, "red")
    }

    func testTimedPagesLoop() throws {
        let h = try StageHarness(yaml: """
            size: display
            pages:
              - {name: one, duration: 2, widgets: [{type: rect, background: "#ff0000"}]}
              - {name: two, duration: 2, widgets: [{type: rect, background: "#00ff00"}]}
            """)
        h.settle()
        h.run(for: .milliseconds(2100))
        XCTAssertEqual(h.stage.currentPage, "two")
        h.run(for: .milliseconds(2000))
        XCTAssertEqual(h.stage.currentPage, "one")
        h.settle()
        XCTAssertEqual(try h.pixel(x: 5, y: 5), 0xFF0000)
    }
}
