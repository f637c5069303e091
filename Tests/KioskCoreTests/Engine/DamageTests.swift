import KioskCore
import KioskDisplay
import XCTest

final class DamageTests: XCTestCase {
    private func lastDamage(_ h: EngineHarness, file: StaticString = #filePath, line: UInt = #line) -> Set<Rect> {
        guard let call = h.compositor.composeCalls.last else {
            XCTFail("nothing was composed", file: file, line: line)
            return []
        }
        return Set(call.damage)
    }

    func testMovingALayerDamagesWhereItWasAndWhereItIsWithoutRendering() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("card", frame: Rect(x: 4, y: 4, width: 10, height: 8), color: red)
        h.settle()
        let renders = h.stats.rendersStarted

        layer.frame = Rect(x: 30, y: 20, width: 10, height: 8)
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 4, y: 4, width: 10, height: 8), Rect(x: 30, y: 20, width: 10, height: 8)])
        XCTAssertEqual(h.stats.rendersStarted, renders, "a move reuses the rendered pixels")
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), xrgb(.black))
        XCTAssertEqual(h.compositor.pixel(x: 31, y: 21), xrgb(red))
    }

    func testChangingContentDamagesOnlyTheLayer() throws {
        let h = try EngineHarness()
        h.addSolidLayer("other", frame: Rect(x: 40, y: 30, width: 10, height: 10), color: blue)
        let layer = h.addSolidLayer("card", frame: Rect(x: 4, y: 4, width: 10, height: 8), color: red)
        h.settle()

        layer.content = SolidContent(color: green)
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 4, y: 4, width: 10, height: 8)])
    }

    func testMovingAParentDamagesItsChildrenOldAndNewRects() throws {
        let h = try EngineHarness()
        let group = Layer(frame: Rect(x: 0, y: 0, width: 30, height: 30), name: "group")
        h.root.addChild(group)
        h.addSolidLayer("child", frame: Rect(x: 2, y: 2, width: 5, height: 5), color: red, to: group)
        h.settle()

        group.transform = .translation(x: 10, y: 0)
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 2, y: 2, width: 5, height: 5), Rect(x: 12, y: 2, width: 5, height: 5)])
    }

    func testOpacityAndHidingDamageTheLayerOnly() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("card", frame: Rect(x: 4, y: 4, width: 10, height: 8), color: red)
        h.settle()
        layer.opacity = 0.5
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 4, y: 4, width: 10, height: 8)])
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), 0x80_0000)
        layer.isHidden = true
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 4, y: 4, width: 10, height: 8)])
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), xrgb(.black))
    }

    func testRaisingALayerDamagesItsArea() throws {
        let h = try EngineHarness()
        let bottom = h.addSolidLayer("bottom", frame: Rect(x: 0, y: 0, width: 10, height: 10), color: red)
        h.addSolidLayer("top", frame: Rect(x: 5, y: 5, width: 10, height: 10), color: blue)
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 7, y: 7), xrgb(blue))

        bottom.zPosition = 1
        h.settle()
        XCTAssertTrue(lastDamage(h).contains(Rect(x: 0, y: 0, width: 10, height: 10)) || lastDamage(h).contains(Rect(x: 5, y: 5, width: 10, height: 10)))
        XCTAssertEqual(h.compositor.pixel(x: 7, y: 7), xrgb(red))
    }

    func testRemovingALayerDamagesWhereItWas() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("card", frame: Rect(x: 4, y: 4, width: 10, height: 8), color: red)
        h.settle()
        layer.removeFromParent()
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 4, y: 4, width: 10, height: 8)])
        XCTAssertEqual(h.compositor.pixel(x: 5, y: 5), xrgb(.black))
    }

    func testDamageIsClippedToTheScreen() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("edge", frame: Rect(x: 60, y: 44, width: 10, height: 10), color: red)
        h.settle()
        layer.content = SolidContent(color: green)
        h.settle()
        XCTAssertEqual(lastDamage(h), [Rect(x: 60, y: 44, width: 4, height: 4)])
    }

    func testAChangeThatCancelsOutBeforeTheCommitComposesNothing() throws {
        let h = try EngineHarness()
        let layer = h.addSolidLayer("card", frame: Rect(x: 4, y: 4, width: 10, height: 8), color: red)
        h.settle()
        let composed = h.stats.framesComposed
        layer.frame.x = 20
        layer.frame.x = 4
        h.settle()
        XCTAssertEqual(h.stats.framesComposed, composed)
    }
}
