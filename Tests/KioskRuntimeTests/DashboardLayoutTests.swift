import KioskCore
import KioskRender
import KioskRuntime
import KioskScene
import XCTest

/// The shipped dashboard (`scenes/dashboard.yaml`) laid out on two common panels, with text measured by Pango.
final class DashboardLayoutTests: XCTestCase {
    private func dashboard() throws -> Scene {
        try SceneLoader.load(path: LayoutFixtures.repositoryRoot.appendingPathComponent("scenes/dashboard.yaml").path).scene
    }

    /// One line of the widget's text set in its font, as the renderer sets it; nil for widgets that are not text.
    private func measure(_ widget: Widget, maxWidth: Double?, scene: Scene) -> Size? {
        let sample: String
        switch widget.content {
        case .text(let text): sample = text.text.render(scene.data)
        case .clock: sample = "Wednesday 30 September 2026"
        case .ticker(let ticker): sample = ticker.text.render(scene.data)
        default: return nil
        }
        let font = widget.style.font
        let family = font?.family ?? scene.font.family ?? Font.defaultFamily
        let weight = (font?.weight ?? scene.font.weight).map { " \($0.rawValue)" } ?? ""
        let size = font?.size ?? scene.font.size ?? 16
        guard let natural = try? TickerTextContent(sample, font: "\(family)\(weight) \(Int(size))").naturalSize() else { return nil }
        let width = maxWidth.map { min(natural.width, Int($0)) } ?? natural.width
        return Size(width: width, height: natural.height)
    }

    private func check(width: Int, height: Int, equalCardsWithin tolerance: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let scene = try dashboard()
        let laidOut = SceneLayout.layout(scene.pages[0].widgets, in: Size(width: width, height: height)) {
            self.measure($0, maxWidth: $1, scene: scene)
        }
        let screen = Rect(x: 0, y: 0, width: width, height: height)
        let all = laidOut.flatMap { $0.flattened() }
        XCTAssertEqual(all.count, scene.pages[0].widgets.flatMap(\.flattened).count, file: file, line: line)
        for (widget, frame) in all {
            XCTAssertFalse(frame.isEmpty, "\(widget.id ?? "?") at \(width)x\(height): \(frame)", file: file, line: line)
            XCTAssertEqual(frame.intersection(screen), frame, "\(widget.id ?? "?") leaves the \(width)x\(height) screen: \(frame)",
                           file: file, line: line)
        }

        let frames = laidOut.pageFramesByID
        let cards = ["card-temperature", "card-humidity", "card-visitors"].compactMap { frames[$0] }
        XCTAssertEqual(cards.count, 3, file: file, line: line)
        let widths = cards.map(\.width)
        XCTAssertLessThanOrEqual(widths.max()! - widths.min()!, tolerance, "card widths at \(width)x\(height): \(widths)", file: file, line: line)
        XCTAssertEqual(Set(cards.map(\.height)).count, 1, "\(cards)", file: file, line: line)
        XCTAssertEqual(cards.map(\.y), [cards[0].y, cards[0].y, cards[0].y], file: file, line: line)
        XCTAssertEqual(zip(cards, cards.dropFirst()).map { $1.x - $0.maxX }, [24, 24], "spacing between the cards", file: file, line: line)

        // Titles sit over their values, inside the card's padding.
        for name in ["temperature", "humidity", "visitors"] {
            guard let card = frames["card-\(name)"], let title = frames["\(name)-title"], let value = frames["\(name)-value"] else {
                XCTFail("missing \(name) card widgets", file: file, line: line)
                continue
            }
            XCTAssertEqual(title.x, card.x + 16, file: file, line: line)
            XCTAssertEqual(title.y, card.y + 16, file: file, line: line)
            XCTAssertEqual(title.width, card.width - 32, file: file, line: line)
            XCTAssertEqual(value.y, title.maxY, file: file, line: line)
            XCTAssertGreaterThan(value.height, title.height, "the value is set larger", file: file, line: line)
            XCTAssertLessThanOrEqual(value.maxY, card.maxY, "\(name) value overflows its card at \(width)x\(height)", file: file, line: line)
        }
    }

    func testDashboardFitsA1024x768Screen() throws {
        // 92% of 1024 less two spacings of 24 is 894.08 pixels: equal thirds round to equal widths.
        try check(width: 1024, height: 768, equalCardsWithin: 0)
    }

    func testDashboardFitsAn800x480Screen() throws {
        // 736 less two spacings is 688 pixels, which three cannot share in whole pixels: the edges are rounded, so
        // one card is a pixel wider.
        try check(width: 800, height: 480, equalCardsWithin: 1)
    }
}
