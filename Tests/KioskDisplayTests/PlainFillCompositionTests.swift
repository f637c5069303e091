import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import XCTest

/// Plain fills (a solid `RectContent` with square corners and no border) are drawn by the compositor into the
/// damage at every composition: no render, no surface, the same pixels on screen, and the hooks and transaction
/// groups that other content goes through still see them. Gradients keep their surface (the plain-fill bench
/// measured them dearer to draw at every composition), but the compositor draws them the same either way.
final class PlainFillCompositionTests: XCTestCase {
    private let red = Color(rgb: 0xFF0000), blue = Color(rgb: 0x0000FF)

    func testWhichRectanglesArePlainFills() {
        XCTAssertTrue(RectContent(color: red).compositesWithoutSurface)
        XCTAssertFalse(RectContent(fill: .linearGradient(colors: [red, blue], angle: 30)).compositesWithoutSurface,
                       "a gradient is dearer drawn at every composition than copied from its surface")
        XCTAssertFalse(RectContent(fill: .verticalGradient(top: red, bottom: blue)).compositesWithoutSurface)
        XCTAssertTrue(RectContent(color: red, border: .init(width: 0, color: blue)).compositesWithoutSurface, "a border of no width")
        XCTAssertFalse(RectContent(color: red, cornerRadius: 8).compositesWithoutSurface, "rounded corners are antialiased")
        XCTAssertFalse(RectContent(color: red, border: .init(width: 2, color: blue)).compositesWithoutSurface)
        XCTAssertFalse(HalvesContent(0xFF00FF00).compositesWithoutSurface, "any other content renders into a surface")
    }

    func testASolidFillIsShownWithNoRenderAndNoSurface() throws {
        let h = try CompositionHarness()
        var displayed: [Bool] = []
        let fill = Layer(frame: Rect(x: 8, y: 8, width: 20, height: 10), content: RectContent(color: red), name: "fill")
        fill.didRender = { _, finished in displayed.append(finished) }
        h.engine.rootLayer.addChild(fill)
        h.settle()
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 8, y: 8, width: 20, height: 10)))
        XCTAssertNil(fill.renderedSurface, "a plain fill holds no surface")
        XCTAssertEqual(h.engine.stats.rendersStarted, 0, "nothing was rendered")
        XCTAssertEqual(h.engine.surfaceStatistics.totalBytes, 0)
        XCTAssertEqual(displayed, [true], "didRender still reports the fill shown, once")
    }

    func testChangingTheFillRecomposesItsAreaWithNoRender() throws {
        let h = try CompositionHarness()
        let fill = Layer(frame: Rect(x: 0, y: 0, width: 16, height: 16), content: RectContent(color: red), name: "fill")
        h.engine.rootLayer.addChild(fill)
        h.settle()
        let composed = h.engine.stats.framesComposed
        fill.content = RectContent(color: blue)
        h.settle()
        XCTAssertEqual(h.frontPixels(0x0000FF), pixels(in: Rect(x: 0, y: 0, width: 16, height: 16)))
        XCTAssertEqual(h.frontPixels(0xFF0000), [])
        XCTAssertEqual(h.engine.stats.framesComposed, composed + 1)
        XCTAssertEqual(h.engine.stats.rendersStarted, 0)
        // The same fill again changes nothing on screen: no damage, no new frame.
        fill.content = RectContent(color: blue)
        h.settle()
        XCTAssertEqual(h.engine.stats.framesComposed, composed + 1, "an equal fill is no change")
    }

    func testTheCompositorDrawsAFillDirectlyWithTheRenderedPixels() throws {
        let size = Size(width: 64, height: 48)
        let frame = Rect(x: 4, y: 6, width: 50, height: 30)
        for content in [RectContent(color: Color(red: 0.2, green: 0.6, blue: 0.4, alpha: 0.7)),
                        RectContent(fill: .linearGradient(colors: [red, Color(rgb: 0x00FF00), blue], angle: 30))] {
            let surface = LayerSurface(size: frame.size, isOpaque: content.isOpaque)
            try content.draw(into: surface, isCancelled: { false })
            let direct = try ShadowCompositor(size: size, background: Color(rgb: 0x102030))
            direct.compose([CompositeItem(source: .content(content), frame: frame)], damage: [Rect(size: size)])
            let copied = try ShadowCompositor(size: size, background: Color(rgb: 0x102030))
            copied.compose([CompositeItem(source: .surface(surface), frame: frame)], damage: [Rect(size: size)])
            let a = direct.snapshot(), b = copied.snapshot()
            let worst = zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
            XCTAssertLessThanOrEqual(worst, 1, "\(content.fill): the same pixels drawn directly as copied from its render")
            XCTAssertNotEqual(a, try ShadowCompositor(size: size, background: Color(rgb: 0x102030)).snapshot(), "it drew something")
        }
    }

    func testGradientsAndRoundedRectanglesStillRenderIntoASurface() throws {
        for content in [RectContent(fill: .verticalGradient(top: red, bottom: blue)), RectContent(color: red, cornerRadius: 6)] {
            let h = try CompositionHarness()
            let layer = Layer(frame: Rect(x: 0, y: 0, width: 30, height: 20), content: content, name: "rect")
            h.engine.rootLayer.addChild(layer)
            h.settle()
            XCTAssertNotNil(layer.renderedSurface, "\(content)")
            XCTAssertEqual(h.engine.stats.rendersStarted, 1, "\(content)")
        }
    }

    /// A scene root: its background a plain fill, holding its children until all of them have rendered; counts
    /// its finished displays into `displays`.
    private func sceneRoot(counting displays: @escaping () -> Void) -> Layer {
        let root = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), content: RectContent(color: blue), name: "scene")
        root.holdsChildrenUntilReady = true
        root.didRender = { _, finished in if finished { displays() } }
        return root
    }

    func testAGroupRootedInAPlainFillAppearsWholeAndReportsItsDisplay() throws {
        let h = try CompositionHarness()
        var rootDisplayed = 0
        let root = sceneRoot { rootDisplayed += 1 }
        let child = Layer(frame: Rect(x: 10, y: 10, width: 8, height: 8), content: HalvesContent(0xFFFF0000), name: "child")
        root.addChild(child)
        h.engine.rootLayer.addChild(root)
        // The child's render is queued on the manual pool and not run: the group holds everything back.
        h.loop.runOnce(timeout: .zero)
        XCTAssertEqual(rootDisplayed, 0, "the group has not landed while its child renders")
        XCTAssertEqual(h.frontPixels(0x0000FF), [], "nothing of the group is shown before all of it is ready")
        h.settle()
        XCTAssertEqual(rootDisplayed, 1)
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 10, y: 10, width: 8, height: 8)))
        XCTAssertEqual(h.frontPixels(0x0000FF).count, 64 * 48 - 64)
        XCTAssertNil(root.renderedSurface)
    }

    func testAGroupOfPlainFillsAloneLandsAtOnce() throws {
        let h = try CompositionHarness()
        var rootDisplayed = 0
        let root = sceneRoot { rootDisplayed += 1 }
        root.addChild(Layer(frame: Rect(x: 0, y: 0, width: 4, height: 4), content: RectContent(color: red), name: "corner"))
        h.engine.rootLayer.addChild(root)
        h.settle()
        XCTAssertEqual(rootDisplayed, 1, "a group with nothing to render lands in the turn it is shown")
        XCTAssertEqual(h.frontPixels(0xFF0000), pixels(in: Rect(x: 0, y: 0, width: 4, height: 4)))
        XCTAssertEqual(h.engine.stats.rendersStarted, 0)
    }

    func testAPurgedPageOfPlainFillsIsShownAgainAfterItsRestore() throws {
        let h = try CompositionHarness()
        let page = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), name: "page")
        let fill = Layer(frame: Rect(x: 0, y: 0, width: 64, height: 48), content: RectContent(color: red), name: "background")
        page.addChild(fill)
        page.isHidden = true
        h.engine.rootLayer.addChild(page)
        h.settle()
        XCTAssertTrue(h.engine.purgeSurfaces(of: page))
        fill.content = RectContent(color: blue)
        h.engine.restoreSurfaces(of: page)
        page.isHidden = false
        h.settle()
        XCTAssertEqual(h.frontPixels(0x0000FF).count, 64 * 48, "the newest fill, drawn whole")
        XCTAssertFalse(h.engine.isRendering(page))
    }
}
