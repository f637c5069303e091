import Foundation
import KioskCore
import XCTest

/// `plane: true` images (and videos) are offered to overlay planes: with none (headless) they are composited, and
/// `stats` says so; an unmarked image is not reported at all.
final class ScenePlaneTests: XCTestCase {
    func testAPlaneImageIsOfferedAndReportedComposited() throws {
        let svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>"#
        let h = try StageHarness(yaml: """
            size: 320x240
            pages:
              - name: main
                widgets:
                  - {id: poster, type: image, path: poster.svg, plane: true, x: 20, y: 20, width: 100, height: 80}
                  - {id: logo, type: image, path: poster.svg, x: 200, y: 20, width: 40, height: 40}
            """, size: Size(width: 320, height: 240), files: ["poster.svg": Data(svg.utf8)])
        h.settle()
        XCTAssertEqual(h.engine.stats.layerPaths,
                       [LayerPathReport(layer: "poster.body", path: .composited, reason: "no overlay planes")])
    }
}
