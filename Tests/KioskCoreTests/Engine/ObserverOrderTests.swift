import KioskCore
import KioskDisplay
import XCTest

final class ObserverOrderTests: XCTestCase {
    func testOneIterationRunsAnimationsThenLayoutThenDisplayThenCommit() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("probe", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
        h.settle()

        var trace: [String] = []
        layer.layout = { _ in trace.append("layout") }
        layer.willRender = { _ in trace.append("display: willRender") }
        layer.didRender = { _, finished in trace.append("commit: didRender(\(finished))") }
        h.compositor.onCompose = { _ in trace.append("commit: compose") }
        h.compositor.onCopy = { _ in trace.append("commit: copy") }
        var colors = [green, blue].makeIterator()
        h.engine.addAnimation(target: layer) { layer, _ in
            trace.append("animations")
            layer.setNeedsLayout()
            if let color = colors.next() { layer.content = SolidContent(color: color) }
            return true
        }

        // The display link ticks only on flips: the first commit presents the unchanged frame to get one.
        h.turn()
        XCTAssertEqual(trace, ["commit: copy"])
        XCTAssertEqual(h.stats.unchangedFramesPresented, 1)
        trace.removeAll()

        h.completeFlip()  // the flip arrives; its tick waits for the next iteration's animations observer
        XCTAssertEqual(trace, [])
        h.turn()
        XCTAssertEqual(trace, [
            "animations", "layout", "display: willRender", "commit: didRender(true)", "commit: compose", "commit: copy",
        ])
    }

    func testEngineObserversUseTheLoopOrders() {
        XCTAssertLessThan(ObserverOrder.animations, ObserverOrder.layout)
        XCTAssertLessThan(ObserverOrder.layout, ObserverOrder.render)
        XCTAssertLessThan(ObserverOrder.render, ObserverOrder.commit)
    }

    func testLayoutRunsParentsFirstAndBeforeRendersAreDispatched() throws {
        let h = try EngineHarness()
        let parent = Layer(frame: Rect(x: 0, y: 0, width: 40, height: 40), name: "parent")
        let child = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), content: SolidContent(color: red), name: "child")
        parent.addChild(child)
        h.root.addChild(parent)
        h.settle()

        var order: [String] = []
        child.layout = { _ in order.append("child") }
        parent.layout = { parent in
            order.append("parent")
            parent.children[0].frame = Rect(x: 5, y: 5, width: 20, height: 20)
        }
        child.setNeedsLayout()
        parent.setNeedsLayout()
        h.turn()
        XCTAssertEqual(order, ["parent", "child"])
        XCTAssertEqual(h.pool.queuedJobs.map(\.label), ["child"], "the new size is rendered in the same iteration")
    }

    func testARequestMadeDuringCommitWakesTheLoop() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("chain", frame: Rect(x: 0, y: 0, width: 8, height: 8), color: red, async: false)
        var remaining = 1
        layer.didRender = { layer, _ in
            if remaining > 0 {
                remaining -= 1
                layer.content = SolidContent(color: green)
            }
        }
        let wakeups = h.loop.wakeups
        h.turn()
        XCTAssertEqual(h.loop.wakeups, wakeups + 1, "the request made in didRender woke the loop, which would sleep on it")
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(red))
        h.turn()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(green))
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 1, y: 1), xrgb(green))
    }
}
