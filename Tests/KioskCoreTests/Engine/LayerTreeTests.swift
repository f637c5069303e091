import KioskCore
import KioskDisplay
import XCTest

final class LayerTreeTests: XCTestCase {
    func testItemsAreBackToFrontByZPositionThenInsertionOrder() throws {
        let h = try EngineHarness()
        let a = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "a")
        a.backgroundColor = red
        let b = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "b")
        b.backgroundColor = green
        let c = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "c")
        c.backgroundColor = blue
        let aChild = Layer(frame: Rect(x: 1, y: 1, width: 2, height: 2), name: "a.child")
        aChild.backgroundColor = yellow
        a.addChild(aChild)
        for layer in [a, b, c] { h.root.addChild(layer) }
        a.zPosition = 1
        h.settle()
        let colors = try XCTUnwrap(h.compositor.composeCalls.last).itemColors
        XCTAssertEqual(colors, [Color.black, green, blue, red, yellow].map(premultipliedARGB))
    }

    func testFramesResolveThroughAncestorsTranslateAndScaleAndOpacityMultiplies() throws {
        let h = try EngineHarness()
        let parent = Layer(frame: Rect(x: 10, y: 10, width: 20, height: 20), name: "parent")
        parent.transform = LayerTransform(translateX: 5, translateY: 0, scaleX: 2, scaleY: 2)
        parent.opacity = 0.5
        let child = Layer(frame: Rect(x: 0, y: 0, width: 5, height: 5), name: "child")
        child.backgroundColor = red
        child.opacity = 0.5
        parent.addChild(child)
        h.root.addChild(parent)
        h.settle()
        let item = try XCTUnwrap(h.compositor.composeCalls.last?.items.last)
        // Scaled 2x about the parent's centre (20, 20), then moved 5 right: the parent covers (5...45, 0...40).
        XCTAssertEqual(item.frame, Rect(x: 5, y: 0, width: 10, height: 10))
        XCTAssertEqual(item.opacity, 0.25)
    }

    func testHiddenSubtreesAreNotCompositedButStillRendered() throws {
        let h = try EngineHarness()
        let panel = Layer(frame: Rect(x: 0, y: 0, width: 20, height: 20), name: "panel")
        panel.isHidden = true
        h.root.addChild(panel)
        let label = h.addSolidLayer("label", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, to: panel)
        h.settle()
        XCTAssertNotNil(label.renderedSurface, "rendered ahead, so showing it is instant")
        XCTAssertEqual(h.compositor.composeCalls.last?.items.count, 1)
        let renders = h.stats.rendersStarted
        panel.isHidden = false
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
        XCTAssertEqual(h.stats.rendersStarted, renders)
    }

    func testPlaceholderShowsUntilTheFirstRenderLands() throws {
        let h = try EngineHarness()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: SolidContent(color: red), name: "photo")
        layer.placeholderColor = grey
        h.root.addChild(layer)
        h.runsQueuedJobs = false
        h.settleNow()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(grey))
        h.runsQueuedJobs = true
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))

        // A later render keeps the old pixels until it lands, without the placeholder in between.
        layer.content = SolidContent(color: green)
        h.runsQueuedJobs = false
        h.settleNow()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
    }

    func testBackgroundColorIsDrawnOnlyWithoutContent() throws {
        let h = try EngineHarness()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), name: "box")
        layer.backgroundColor = blue
        h.root.addChild(layer)
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(blue))
        XCTAssertEqual(h.stats.rendersStarted, 0, "a colour needs no render")
        layer.content = SolidContent(color: red)
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
        layer.content = nil
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(blue))
    }

    func testRasterizedSubtreeIsOneSurfaceWithTheChildrenDrawnAtTheirOffsets() throws {
        let h = try EngineHarness()
        let card = Layer(frame: Rect(x: 10, y: 10, width: 20, height: 10), name: "card")
        card.backgroundColor = grey
        card.rasterizesSubtree = true
        h.root.addChild(card)
        let left = h.addSolidLayer("left", frame: Rect(x: 0, y: 0, width: 5, height: 5), color: red, to: card)
        let right = Layer(frame: Rect(x: 10, y: 5, width: 5, height: 5), name: "right")
        right.backgroundColor = blue
        right.opacity = 0.5
        card.addChild(right)
        h.settle()

        let call = try XCTUnwrap(h.compositor.composeCalls.last)
        XCTAssertEqual(call.items.count, 2, "the root and the card; the children are inside the card's surface")
        XCTAssertEqual(h.stats.rendersStarted, 1)
        XCTAssertEqual(h.stats.renderMs["rasterized"]?.count, 1)
        XCTAssertNil(left.renderedSurface, "children of a rasterized layer are not rendered on their own")
        let surface = try XCTUnwrap(card.renderedSurface)
        XCTAssertEqual(surface.pixel(x: 1, y: 1), premultipliedARGB(red))
        XCTAssertEqual(surface.pixel(x: 7, y: 1), premultipliedARGB(grey))
        XCTAssertEqual(surface.pixel(x: 11, y: 6), 0xFF40_40C0, "half blue over grey")

        // A change inside renders the card again; the child is still not rendered alone.
        left.content = SolidContent(color: green)
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, 2)
        XCTAssertEqual(card.renderedSurface?.pixel(x: 1, y: 1), premultipliedARGB(green))
        right.frame.x = 0
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, 3)

        // Turned off, the children render and composite on their own.
        card.rasterizesSubtree = false
        h.settle()
        XCTAssertNotNil(left.renderedSurface)
        XCTAssertEqual(h.compositor.composeCalls.last?.items.count, 4)
        XCTAssertEqual(h.compositor.pixel(x: 11, y: 11), xrgb(green))
    }

    func testResizingRendersAgainAndSynchronousLayersRenderInTheSameIteration() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("bar", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
        h.turn()
        XCTAssertEqual(layer.renderedSurface?.size, Size(width: 8, height: 8), "rendered inside the display observer")
        layer.frame.width = 16
        h.turn()
        XCTAssertEqual(layer.renderedSurface?.size, Size(width: 16, height: 8))
        XCTAssertEqual(h.stats.rendersStarted, 2)
    }

    func testRequestsMadeWhileDetachedAreServedOnceAttached() throws {
        let h = try EngineHarness()
        let layer = Layer(frame: Rect(x: 0, y: 0, width: 8, height: 8), content: SolidContent(color: red), name: "late")
        layer.setNeedsRender()
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, 0)
        h.root.addChild(layer)
        h.settle()
        XCTAssertEqual(h.stats.rendersStarted, 1)
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
    }

    func testCallbacksDoNotKeepTheLayerAlive() throws {
        let h = try EngineHarness()
        weak var weakLayer: Layer?
        do {
            let layer = h.addSolidLayer("cb", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red)
            layer.layout = { $0.frame.x = 1 }
            layer.willRender = { _ in }
            layer.didRender = { layer, _ in layer.opacity = 1 }
            weakLayer = layer
            h.settle()
            layer.removeFromParent()
        }
        XCTAssertNil(weakLayer)
    }
}
