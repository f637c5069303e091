import Foundation
import Glibc
import KioskCore
import KioskRuntime
import KioskTestSupport
import XCTest

/// A scene's clock on the scene path: a second later only the clock re-renders and only its region of the screen
/// changes, the same state draws the same pixels, and the wall clock read is the precise one.
final class SceneClockTests: XCTestCase {
    private let clockFrame = Rect(x: 20, y: 20, width: 300, height: 80)

    private func harness() throws -> StageHarness {
        try StageHarness(yaml: """
            size: 640x360
            background: "#102030"
            font: {family: Sans, size: 20}
            data: {temperature: "21.5"}
            pages:
              - name: main
                widgets:
                  - {id: time, type: clock, format: "%H:%M:%S", timezone: UTC, x: 20, y: 20, width: 300, height: 80, font: {size: 48}}
                  - {id: temperature, type: text, text: "{temperature} °C", x: 20, y: 140, width: 300, height: 60}
                  - {id: tile, type: rect, x: 360, y: 140, width: 200, height: 100, background: "#ff8000"}
            """, size: Size(width: 640, height: 360))
    }

    /// Names of the layers whose renders are dispatched from now on, in order.
    private func watchRenders(_ root: Layer) -> () -> [String] {
        final class Log { var names: [String] = [] }
        let log = Log()
        func visit(_ layer: Layer) {
            layer.willRender = { log.names.append($0.name ?? "?") }
            layer.children.forEach(visit)
        }
        visit(root)
        return { log.names }
    }

    /// The smallest rectangle holding every pixel that differs between two frames of `size`; nil when none does.
    private func changedBounds(_ a: [UInt8], _ b: [UInt8], size: Size) -> Rect? {
        var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
        for y in 0..<size.height {
            for x in 0..<size.width {
                let o = (y * size.width + x) * 4
                guard a[o] != b[o] || a[o + 1] != b[o + 1] || a[o + 2] != b[o + 2] else { continue }
                minX = min(minX, x); minY = min(minY, y); maxX = max(maxX, x); maxY = max(maxY, y)
            }
        }
        guard maxX >= 0 else { return nil }
        return Rect(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1)
    }

    func testASecondLaterOnlyTheClockRerendersAndOnlyItsRegionChanges() throws {
        let h = try harness()
        h.settle()
        // One second first, so both scan-out buffers have been written whole: from here on a present copies only
        // what changed since the buffer was last shown.
        h.wallClock.seconds += 1
        h.run(for: .seconds(1))
        h.settle()
        let size = Size(width: 640, height: 360)
        let before = try h.screen()
        let rendered = watchRenders(h.engine.rootLayer)
        var damage: [Rect] = []
        h.listeners.append(h.engine.addPresentListener { rects in damage += rects })

        h.wallClock.seconds += 1
        h.run(for: .seconds(1))
        h.settle()

        XCTAssertEqual(rendered(), ["time.body"], "only the clock widget re-renders")
        XCTAssertFalse(damage.isEmpty, "the new second was presented")
        for rect in damage { XCTAssertEqual(rect.intersection(clockFrame), rect, "damage \(rect) lies inside the clock's \(clockFrame)") }
        let after = try h.screen()
        let changed = try XCTUnwrap(changedBounds(before, after, size: size), "the clock's text changed on screen")
        XCTAssertEqual(changed.intersection(clockFrame), changed, "pixels changed at \(changed), outside the clock's \(clockFrame)")
    }

    func testTheSameStateDrawsTheSamePixels() throws {
        let h = try harness()
        h.settle()
        let first = try h.screen()
        h.wallClock.seconds += 1
        h.run(for: .seconds(1))
        h.settle()
        XCTAssertNotEqual(try h.screen(), first, "a second later the clock differs")
        h.wallClock.seconds -= 1
        h.run(for: .seconds(1))
        h.settle()
        XCTAssertEqual(try h.screen(), first, "back at the first second: the same pixels")
        // A second stage on the same scene and time draws them too.
        let other = try harness()
        other.settle()
        XCTAssertEqual(try other.screen(), first)
    }

    /// Just after a second boundary the wall clock already reads the new second (`time()`, served from the coarse
    /// clock, can still read the old one for a few milliseconds, and clocks tick 2 ms after each boundary).
    func testTheWallClockReadsTheNewSecondRightAfterTheBoundary() throws {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let start = ts.tv_sec
        // Read without pause, so that the boundary is seen within microseconds of it.
        try Poll.until("the wall clock's next second", timeout: 3, interval: 0) {
            clock_gettime(CLOCK_REALTIME, &ts)
            return ts.tv_sec != start
        }
        XCTAssertEqual(WallClock.seconds(), Int(ts.tv_sec), "read \(ts.tv_nsec) ns after the boundary")
    }
}
