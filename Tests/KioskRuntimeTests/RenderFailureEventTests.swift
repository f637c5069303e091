import Foundation
import KioskCore
import KioskRuntime
import XCTest

/// A widget whose render fails is reported as an `error` event, and the rest of the scene still shows.
final class RenderFailureEventTests: XCTestCase {
    func testAFailedRenderBecomesAnErrorEvent() throws {
        let h = try StageHarness(yaml: """
            size: display
            pages:
              - name: main
                widgets:
                  - {id: box, type: rect, background: "#ff0000", x: 0, y: 0, width: 100, height: 100}
                  - {id: broken, type: text, text: "<b>never closed", markup: true, x: 0, y: 200, width: 300, height: 40}
            """)
        let events = EventLog()
        h.listeners.append(h.stage.addEventListener { events.append($0) })
        h.settle()
        XCTAssertEqual(try h.pixel(x: 50, y: 50), 0xFF0000, "the rest of the scene shows")
        guard case .error(let code, let message)? = events.items.first else { return XCTFail("no error event: \(events.items)") }
        XCTAssertEqual(code, "render_failed")
        XCTAssertTrue(message.contains("broken"), message)
        XCTAssertEqual(h.stats.rendersFailed, 1)
    }
}
