import KioskCore
import XCTest

/// `FrameDiff` and `LayerFlattener` as plain functions: values in, items and damage out, no engine.
final class FrameDiffTests: XCTestCase {
    private let screen = Rect(x: 0, y: 0, width: 100, height: 80)
    /// Stand-ins for layers: the diff only uses their identity.
    private let a = Layer(name: "a"), b = Layer(name: "b")

    private func entry(_ layer: Layer, _ frame: Rect, _ color: Color = red, opacity: Double = 1) -> FrameDiff.Entry {
        let item = CompositeItem(source: .color(color), frame: frame, opacity: opacity)
        return FrameDiff.Entry(id: ObjectIdentifier(layer), item: item, visible: frame.intersection(screen))
    }

    private func record(_ entries: [FrameDiff.Entry]) -> FrameDiff.Record {
        FrameDiff.diff(entries, against: FrameDiff.Record(), screen: screen).record
    }

    func testTheFirstFrameDamagesEveryItemAndKeepsTheirOrder() {
        let first = [entry(a, Rect(x: 0, y: 0, width: 10, height: 10)), entry(b, Rect(x: 20, y: 0, width: 10, height: 10), blue)]
        let out = FrameDiff.diff(first, against: FrameDiff.Record(), screen: screen)
        XCTAssertEqual(Set(out.damage), [Rect(x: 0, y: 0, width: 10, height: 10), Rect(x: 20, y: 0, width: 10, height: 10)])
        XCTAssertEqual(out.items.map(\.frame), first.map(\.item.frame))
        XCTAssertEqual(out.record.layerCount, 2)
    }

    func testAnUnchangedFrameHasNoDamage() {
        let frame = [entry(a, Rect(x: 0, y: 0, width: 10, height: 10))]
        let out = FrameDiff.diff(frame, against: record(frame), screen: screen)
        XCTAssertEqual(out.damage, [])
        XCTAssertEqual(out.items.count, 1, "the items are still the whole frame")
    }

    func testAMoveDamagesWhereTheItemWasAndWhereItIs() {
        let before = record([entry(a, Rect(x: 0, y: 0, width: 10, height: 10))])
        let out = FrameDiff.diff([entry(a, Rect(x: 50, y: 40, width: 10, height: 10))], against: before, screen: screen)
        XCTAssertEqual(Set(out.damage), [Rect(x: 0, y: 0, width: 10, height: 10), Rect(x: 50, y: 40, width: 10, height: 10)])
    }

    func testAColourOrOpacityChangeDamagesTheItemOnly() {
        let before = record([entry(a, Rect(x: 0, y: 0, width: 10, height: 10)), entry(b, Rect(x: 30, y: 0, width: 10, height: 10))])
        let recoloured = FrameDiff.diff([entry(a, Rect(x: 0, y: 0, width: 10, height: 10), green),
                                         entry(b, Rect(x: 30, y: 0, width: 10, height: 10))], against: before, screen: screen)
        XCTAssertEqual(Set(recoloured.damage), [Rect(x: 0, y: 0, width: 10, height: 10)])
        let faded = FrameDiff.diff([entry(a, Rect(x: 0, y: 0, width: 10, height: 10)),
                                    entry(b, Rect(x: 30, y: 0, width: 10, height: 10), opacity: 0.5)], against: before, screen: screen)
        XCTAssertEqual(Set(faded.damage), [Rect(x: 30, y: 0, width: 10, height: 10)])
    }

    func testARemovedItemDamagesWhereItWas() {
        let before = record([entry(a, Rect(x: 0, y: 0, width: 10, height: 10)), entry(b, Rect(x: 30, y: 5, width: 10, height: 10))])
        let out = FrameDiff.diff([entry(a, Rect(x: 0, y: 0, width: 10, height: 10))], against: before, screen: screen)
        XCTAssertEqual(out.damage, [Rect(x: 30, y: 5, width: 10, height: 10)])
        XCTAssertEqual(out.record.layerCount, 1)
    }

    func testReorderingDamagesTheItemThatMovedForward() {
        let first = entry(a, Rect(x: 0, y: 0, width: 20, height: 20)), second = entry(b, Rect(x: 10, y: 10, width: 20, height: 20), blue)
        let before = record([first, second])
        let out = FrameDiff.diff([second, first], against: before, screen: screen)
        XCTAssertEqual(out.damage, [first.visible], "a, now after b, is redrawn over their overlap")
    }

    func testDamageIsClippedToTheScreenAndForcedDamageIsKept() {
        let before = record([entry(a, Rect(x: 90, y: 70, width: 20, height: 20))])
        let out = FrameDiff.diff([entry(a, Rect(x: 200, y: 200, width: 20, height: 20))], against: before,
                                 forcedDamage: [Rect(x: -5, y: -5, width: 10, height: 10)], screen: screen)
        XCTAssertEqual(Set(out.damage), [Rect(x: 0, y: 0, width: 5, height: 5), Rect(x: 90, y: 70, width: 10, height: 10)],
                       "the off-screen position adds nothing")
    }

    // MARK: Flattening

    func testFlatteningResolvesFramesOpacityAndDrawingOrder() {
        let root = Layer(frame: screen, name: "root")
        root.backgroundColor = .black
        let group = Layer(frame: Rect(x: 10, y: 10, width: 50, height: 50), name: "group")
        group.opacity = 0.5
        root.addChild(group)
        let back = Layer(frame: Rect(x: 5, y: 5, width: 10, height: 10), name: "back")
        back.backgroundColor = red
        back.zPosition = 1
        let front = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "front")
        front.backgroundColor = blue
        front.zPosition = 2
        group.addChild(front)
        group.addChild(back)
        let hidden = Layer(frame: Rect(x: 0, y: 0, width: 10, height: 10), name: "hidden")
        hidden.backgroundColor = green
        hidden.isHidden = true
        root.addChild(hidden)

        let entries = LayerFlattener.flatten(root, screen: screen)
        XCTAssertEqual(entries.map(\.id), [ObjectIdentifier(root), ObjectIdentifier(back), ObjectIdentifier(front)],
                       "the group has no colour of its own, the hidden layer is left out, zPosition orders siblings")
        XCTAssertEqual(entries[1].item.frame, Rect(x: 15, y: 15, width: 10, height: 10))
        XCTAssertEqual(entries[1].item.opacity, 0.5)
    }

    func testFlatteningClipsToClippingAncestorsAndLeavesHeldGroupsOut() {
        let root = Layer(frame: screen, name: "root")
        let clipper = Layer(frame: Rect(x: 0, y: 0, width: 20, height: 20), name: "clipper")
        clipper.clipsToBounds = true
        root.addChild(clipper)
        let inside = Layer(frame: Rect(x: 2, y: 2, width: 5, height: 5), name: "inside")
        inside.backgroundColor = red
        let across = Layer(frame: Rect(x: 15, y: 0, width: 10, height: 10), name: "across")
        across.backgroundColor = blue
        clipper.addChild(inside)
        clipper.addChild(across)

        let entries = LayerFlattener.flatten(root, screen: screen)
        XCTAssertEqual(entries.map(\.item.clip), [nil, Rect(x: 0, y: 0, width: 20, height: 20)],
                       "a clip that cuts nothing is left off")
        XCTAssertEqual(entries[1].visible, Rect(x: 15, y: 0, width: 5, height: 10))

        XCTAssertEqual(LayerFlattener.flatten(root, screen: screen) { $0 === clipper }.count, 0,
                       "a held group shows nothing of its subtree")
    }

    func testFlattenThenDiffOfAMovedLayer() {
        let root = Layer(frame: screen, name: "root")
        let card = Layer(frame: Rect(x: 4, y: 4, width: 10, height: 8), name: "card")
        card.backgroundColor = red
        root.addChild(card)
        let first = FrameDiff.diff(LayerFlattener.flatten(root, screen: screen), against: FrameDiff.Record(), screen: screen)
        card.frame = Rect(x: 30, y: 20, width: 10, height: 8)
        let second = FrameDiff.diff(LayerFlattener.flatten(root, screen: screen), against: first.record, screen: screen)
        XCTAssertEqual(Set(second.damage), [Rect(x: 4, y: 4, width: 10, height: 8), Rect(x: 30, y: 20, width: 10, height: 8)])
    }
}

extension FrameDiffTests {
    func testARectangleInsideAnotherIsDropped() {
        let out = FrameDiff.diff([entry(a, Rect(x: 2, y: 2, width: 4, height: 4))], against: FrameDiff.Record(),
                                 forcedDamage: [screen], screen: screen)
        XCTAssertEqual(out.damage, [screen])
    }
}
