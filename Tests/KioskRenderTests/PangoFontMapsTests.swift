import CCairo
import Foundation
import XCTest
import KioskCore
import KioskTestSupport
@testable import KioskRender

/// Font maps are lent to a thread from a layout's creation to its release (PangoFontMaps): a thread never waits for
/// another's text render. Drawing the same text on many threads at once gives the main thread's pixels:
/// LayerContentTests.testContentDrawsConcurrentlyOnSeveralThreads.
final class PangoFontMapsTests: XCTestCase {
    /// Runs `body` on a new thread with a scratch Cairo context.
    private func onThread(_ body: @escaping @Sendable (OpaquePointer) -> Void) {
        Thread {
            let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)!
            let cr = cairo_create(surface)!
            body(cr)
            cairo_destroy(cr)
            cairo_surface_destroy(surface)
        }.start()
    }

    func testAThreadKeepsOneMapForNestedLayoutsAndGivesItBackWithTheLast() throws {
        let holding = DispatchSemaphore(value: 0), checked = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let failures = Lock<[String]>([])
        let heldInside = Lock<Bool?>(nil)
        onThread { cr in
            do {
                let outer = try TextLayout(context: cr)
                outer.setText("outer")
                holding.signal()
                _ = checked.wait(timeout: .now() + 10)
                let lentBefore = PangoFontMaps.counts.lent
                // A second layout while the first is open: the thread's map again, not another one.
                let inner = try TextLayout(context: cr)
                inner.setText("inner")
                if PangoFontMaps.counts.lent != lentBefore { failures.withLock { $0.append("the inner layout took another map") } }
                if inner.logicalExtents.width <= 0 || outer.logicalExtents.width <= 0 {
                    failures.withLock { $0.append("a layout has no width") }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
            heldInside.withLock { $0 = PangoFontMaps.thisThreadHoldsAMap }
            done.signal()
        }
        XCTAssertEqual(holding.wait(timeout: .now() + 10), .success)
        XCTAssertGreaterThanOrEqual(PangoFontMaps.counts.lent, 1, "the thread holds a map while its layout is open")
        XCTAssertFalse(PangoFontMaps.thisThreadHoldsAMap, "the test's thread holds none")
        checked.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(heldInside.withLock { $0 }, false, "given back with its last layout")
    }

    func testAThreadLaysTextOutWhileAnotherHoldsAMap() throws {
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        onThread { cr in
            let layout = try? TextLayout(context: cr)
            holding.signal()
            _ = release.wait(timeout: .now() + 10)
            _ = layout
            done.signal()
        }
        XCTAssertEqual(holding.wait(timeout: .now() + 10), .success)
        // While the other thread holds its map, this one lays text out on another: no waiting.
        let size = try TextBlock.measure("main thread", isMarkup: false, style: TextStyle(font: "Sans 18", color: .white), maxWidth: nil)
        XCTAssertGreaterThan(size.width, 0)
        release.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    }

    func testAMapGivenBackIsLentAgainRatherThanANewOneMade() throws {
        _ = try TextBlock.measure("warm", isMarkup: false, style: TextStyle(font: "Sans 18", color: .white), maxWidth: nil)
        let made = PangoFontMaps.counts.made
        for index in 0..<3 {
            let done = DispatchSemaphore(value: 0)
            onThread { _ in
                _ = try? TextBlock.measure("thread \(index)", isMarkup: false, style: TextStyle(font: "Sans 18", color: .white), maxWidth: nil)
                done.signal()
            }
            XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        }
        XCTAssertEqual(PangoFontMaps.counts.made, made, "one thread after another: the idle map each time")
    }

    /// Two real text renders on two render workers, each stopped inside its render (at the content's cancellation
    /// check, with its layout open) until the other has reached the same point: they can only both get there if
    /// neither waits for the other's font map. Their time ranges overlap.
    func testTwoTextRendersOnTwoWorkersRunAtTheSameTime() throws {
        let pool = RenderQueuePool(strategy: .roundRobin, workerCount: 2)
        let inside = Lock(0)
        let ranges = Lock<[String: (start: MonotonicInstant, end: MonotonicInstant, inked: Bool)]>([:])
        let failures = Lock<[String]>([])
        let text = String(repeating: "Departures to Lyon, Geneva and Turin are on time. ", count: 20)
        for name in ["a", "b"] {
            pool.submit(RenderJobInfo(label: name, kind: "text")) {
                let content = TextContent(text, font: "Sans 16", wraps: true)
                let surface = LayerSurface(size: Size(width: 320, height: 400))
                var arrived = false
                let start = MonotonicInstant.now()
                do {
                    try content.draw(into: surface, isCancelled: {
                        guard !arrived else { return false }
                        arrived = true
                        inside.withLock { $0 += 1 }
                        do {
                            try Poll.until("the other render to be inside its render too", timeout: 10, interval: 0.0005) {
                                inside.withLock { $0 } >= 2
                            }
                        } catch {
                            failures.withLock { $0.append("\(name): \(error)") }
                        }
                        return false
                    })
                } catch {
                    failures.withLock { $0.append("\(name): \(error)") }
                }
                let end = MonotonicInstant.now()
                let inked = (0..<surface.size.height).contains { y in (0..<surface.size.width).contains { surface.pixel(x: $0, y: y) != 0 } }
                ranges.withLock { $0[name] = (start, end, inked) }
            }
        }
        XCTAssertTrue(pool.waitUntilIdle(timeout: .seconds(30)))
        XCTAssertEqual(failures.withLock { $0 }, [])
        let a = try XCTUnwrap(ranges.withLock { $0["a"] }), b = try XCTUnwrap(ranges.withLock { $0["b"] })
        XCTAssertTrue(a.start < b.end && b.start < a.end, "the two renders' time ranges overlap")
        XCTAssertTrue(a.inked && b.inked, "both drew their text")
    }
}
