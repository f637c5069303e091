import KioskCore
import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// A video wall: each panel lays the scene out on the wall's whole canvas and shows its part, so what crosses a
/// bezel is one picture. Four 2x2 panels' screenshots, stitched with the bezel gaps, are the whole canvas rendered
/// on one screen of its size, cropped: pixel for pixel.
final class VideoWallTests: XCTestCase {
    static let panel = Size(width: 160, height: 120)

    /// A gradient across the wall, a text and boxes that cross both bezels, a page of its own size.
    static let scene = """
        size: display
        background: {gradient: ["#ff7a18", "#203040"], angle: 30}
        font: {family: Sans, size: 24}
        pages:
          - name: main
            widgets:
              - {type: text, text: "<b>Across the wall</b>", markup: true, align: center, x: 5%, y: 10%, width: 90%, height: 20%, foreground: white, font: {size: 30}}
              - {type: rect, x: 140, y: 100, width: 60, height: 50, background: "#80ffffff", border: {width: 3, colour: "#00ff00"}}
              - {type: rect, x: 0, y: 60%, width: 100%, height: 12, background: {gradient: ["#ff0000", "#0000ff"], angle: 0}}
              - {type: progress, value: 0.66, x: 10%, y: 80%, width: 80%, height: 16}
        """

    func testFourPanelsStitchedWithTheirBezelsAreTheWholeCanvasCropped() throws {
        var settings = WallSettings()
        settings.columns = 2
        settings.rows = 2
        settings.bezelX = .pixels(10)
        settings.bezelY = .pixels(6)
        let canvas = settings.placement(panel: Self.panel).canvas(panel: Self.panel)
        XCTAssertEqual(canvas, Size(width: 330, height: 246))
        let whole = try StageHarness(yaml: Self.scene, size: canvas)
        whole.settle()
        let reference = try XCTUnwrap(whole.engine.screenshot(), "the canvas on one screen")
        for row in 0..<2 {
            for column in 0..<2 {
                settings.column = column
                settings.row = row
                let member = try StageHarness(yaml: Self.scene, size: Self.panel, wall: settings)
                member.settle()
                let shot = try XCTUnwrap(member.engine.screenshot(), "panel \(column),\(row)")
                let viewport = settings.placement(panel: Self.panel).viewport(panel: Self.panel)
                XCTAssertEqual(viewport, Rect(x: column * 170, y: row * 126, width: 160, height: 120))
                let expected = ScreenImages.crop(reference, width: canvas.width, to: viewport)
                XCTAssertEqual(ScreenImages.differing(shot, expected), 0, "panel \(column),\(row): pixels differing from the canvas's \(viewport)")
                XCTAssertEqual(member.stage.wall, settings)
            }
        }
        // What the bezels hide is on no panel: the canvas has content there (the gradient), so the stitched panels
        // are not the whole canvas squeezed together.
        let squeezed = ScreenImages.crop(reference, width: canvas.width, to: Rect(x: 160, y: 0, width: 160, height: 120))
        settings.column = 1
        settings.row = 0
        let right = try StageHarness(yaml: Self.scene, size: Self.panel, wall: settings)
        right.settle()
        XCTAssertGreaterThan(ScreenImages.differing(try XCTUnwrap(right.engine.screenshot()), squeezed), 0)
    }

    /// A bezel in millimetres becomes pixels at the panel's own density; the canvas follows the panel's size.
    func testABezelInMillimetresIsPixelsAtThePanelsDensity() {
        var settings = WallSettings()
        settings.columns = 3
        settings.rows = 1
        settings.column = 2
        settings.bezelX = .millimetres(6.5)
        settings.bezelY = .millimetres(6.5)
        settings.panelMM = (width: 527, height: 296)
        let placement = settings.placement(panel: Size(width: 1920, height: 1080))
        // 1920 / 527 px per mm across: 23.68 → 24; 1080 / 296 down: 23.72 → 24.
        XCTAssertEqual(placement.bezelX, 24)
        XCTAssertEqual(placement.bezelY, 24)
        XCTAssertEqual(placement.canvas(panel: Size(width: 1920, height: 1080)), Size(width: 3 * 1920 + 2 * 24, height: 1080))
        XCTAssertEqual(placement.viewport(panel: Size(width: 1920, height: 1080)), Rect(x: 2 * 1944, y: 0, width: 1920, height: 1080))
    }
}
