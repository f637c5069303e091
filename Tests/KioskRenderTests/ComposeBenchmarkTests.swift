import KioskCore
import KioskRender
import XCTest

/// The compositor's cost for a typical kiosk frame. It prints timings
/// and asserts only what the frames contain: wall-clock limits belong to no unit test. Run it in release for
/// numbers that mean something:
///     swift test -c release --filter ComposeBenchmarkTests
final class ComposeBenchmarkTests: XCTestCase {
    func testComposeTenPercentDamageOf1080p() throws {
        let size = Size(width: 1920, height: 1080)
        let clockFrame = Rect(x: 660, y: 300, width: 600, height: 150)
        let tickerFrame = Rect(x: 0, y: 960, width: 1920, height: 60)
        let damage = [clockFrame, tickerFrame]
        let damagePixels = clockFrame.area + tickerFrame.area
        XCTAssertEqual(Double(damagePixels) / Double(size.width * size.height), 0.1, accuracy: 0.005)

        let ticker = TickerTextContent(String(repeating: "Departures · Platform 4 · 12:40 Lyon · ", count: 12),
                                       font: "Sans 32", padding: 40)
        let tickerSize = try ticker.naturalSize()
        let contents: [(content: any LayerContent, frame: Rect)] = [
            (RectContent(fill: .verticalGradient(top: Color(rgb: 0x1A1D26), bottom: Color(rgb: 0x07080C))), Rect(size: size)),
            (RectContent(color: Color(rgb: 0x202840, alpha: 0.8), cornerRadius: 24), Rect(x: 100, y: 100, width: 500, height: 700)),
            (RectContent(color: Color(rgb: 0x202840, alpha: 0.8), cornerRadius: 24), Rect(x: 1320, y: 100, width: 500, height: 700)),
            (TextContent("Welcome", font: "Sans Bold 64", alignment: .center), Rect(x: 100, y: 120, width: 500, height: 100)),
            (ClockContent(text: "12:34:56", font: "Sans Bold 120"), clockFrame),
            (ProgressContent(value: 0.6), Rect(x: 660, y: 500, width: 600, height: 16)),
            (ticker, Rect(x: -200, y: tickerFrame.y, width: tickerSize.width, height: tickerFrame.height)),
            (FPSContent(framesPerSecond: 60, frameMilliseconds: 1.4), Rect(x: 1700, y: 20, width: 200, height: 32)),
        ]
        let items = try contents.map { item in
            CompositeItem(source: .surface(try render(item.content, size: Size(width: item.frame.width,
                                                                                height: item.frame.height))),
                          frame: item.frame)
        }
        let compositor = try ShadowCompositor(size: size)
        compositor.compose(items, damage: [Rect(size: size)])
        let back = TestImage(width: 1920, height: 1080)
        _ = compositor.copy(into: back.buffer(index: 0))

        let clock = ContinuousClock()
        var composeTimes: [Duration] = [], copyTimes: [Duration] = []
        for _ in 0..<60 {
            var composed: [Rect] = []
            composeTimes.append(clock.measure { composed = compositor.compose(items, damage: damage) })
            XCTAssertEqual(composed.reduce(0) { $0 + $1.area }, damagePixels)
            var copied = (rects: [Rect](), bytes: 0)
            copyTimes.append(clock.measure { copied = compositor.copy(into: back.buffer(index: 0)) })
            XCTAssertEqual(copied.bytes, damagePixels * 4)
        }
        XCTAssertTrue(back.diff(snapshot: compositor.snapshot()).matches)

        print("compose 1920x1080, \(damagePixels) px damaged (10 %): median \(milliseconds(composeTimes)) ms; "
              + "copy median \(milliseconds(copyTimes)) ms (the naive full redraw is measured by kioskd bench)")
    }

    private func milliseconds(_ times: [Duration]) -> String {
        let sorted = times.sorted()
        let median = sorted[sorted.count / 2]
        let (seconds, attoseconds) = median.components
        let ms = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.3f", ms)
    }
}
