import CCairo
import Foundation
import XCTest
import KioskCore
@testable import KioskRender

/// The main thread keeps its own Pango font map; every other thread shares one, holding it from a layout's creation
/// to its release (PangoFontMaps). Drawing the same text on many threads at once gives the main thread's pixels:
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

    func testOnlyTheProcesssMainThreadKeepsItsOwnMap() {
        XCTAssertTrue(PangoFontMaps.onMainThread, "XCTest runs tests on the main thread")
        let answer = Lock<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        onThread { _ in
            answer.withLock { $0 = PangoFontMaps.onMainThread }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(answer.withLock { $0 }, false)
    }

    func testAThreadHoldsTheSharedMapUntilItsLayoutsAreReleasedAndMayOpenOneInsideAnother() throws {
        let holding = DispatchSemaphore(value: 0), checked = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        let failures = Lock<[String]>([])
        XCTAssertFalse(PangoFontMaps.sharedMapIsBusy)
        onThread { cr in
            do {
                let outer = try TextLayout(context: cr)
                outer.setText("outer")
                holding.signal()
                _ = checked.wait(timeout: .now() + 10)
                // A second layout while the first is open: the lock is taken again, not waited for.
                let inner = try TextLayout(context: cr)
                inner.setText("inner")
                if inner.logicalExtents.width <= 0 || outer.logicalExtents.width <= 0 {
                    failures.withLock { $0.append("a layout has no width") }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
            done.signal()
        }
        XCTAssertEqual(holding.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(PangoFontMaps.sharedMapIsBusy, "the thread holds the shared map while its layout is open")
        checked.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "nested layouts on one thread do not wait for each other")
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertFalse(PangoFontMaps.sharedMapIsBusy, "released with its layouts")
    }

    func testTheMainThreadNeverTakesTheSharedMap() throws {
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        onThread { cr in
            let layout = try? TextLayout(context: cr)
            holding.signal()
            _ = release.wait(timeout: .now() + 10)
            _ = layout
            done.signal()
        }
        XCTAssertEqual(holding.wait(timeout: .now() + 10), .success)
        // While a worker holds the shared map, the main thread lays text out with its own: no waiting.
        let size = try TextBlock.measure("main thread", isMarkup: false, style: TextStyle(font: "Sans 18", color: .white), maxWidth: nil)
        XCTAssertGreaterThan(size.width, 0)
        release.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
    }
}
