import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// The placement rules of `SceneLayout`, one rule per test, on scenes decoded as `SceneLoader` decodes files.
final class SceneLayoutTests: XCTestCase {
    typealias Measure = LayoutFixtures.Measure

    // MARK: Absolute placement

    func testPageWidgetsFillTheRestOfThePageOrTakeTheirNaturalSize() throws {
        let widgets = try LayoutFixtures.widgets("""
        - {id: fill, type: rect}
        - {id: rest, type: rect, x: 100, y: 50}
        - {id: label, type: text, text: hi, x: 10%, y: 25%}
        - {id: wide, type: text, text: long, x: 700}
        - {id: sized, type: rect, x: 50%, y: 50%, width: 25%, height: 10%}
        - {id: tall, type: text, text: t, width: 200}
        - {id: unmeasured, type: text, text: "?", x: 10, y: 20}
        - {id: box, type: row, x: 10, y: 10}
        """)
        let measure = Measure(["label": Size(width: 120, height: 30), "wide": Size(width: 300, height: 30), "tall": Size(width: 90, height: 40)])
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: measure).framesByID

        XCTAssertEqual(frames["fill"], rect(0, 0, 800, 600))
        XCTAssertEqual(frames["rest"], rect(100, 50, 700, 550))
        XCTAssertEqual(frames["label"], rect(80, 150, 120, 30), "x and y in percent of the page; natural size")
        XCTAssertEqual(frames["wide"], rect(700, 0, 100, 30), "natural width capped at the page's width - x")
        XCTAssertEqual(frames["sized"], rect(400, 300, 200, 60))
        XCTAssertEqual(frames["tall"], rect(0, 0, 200, 40), "explicit width, natural height")
        XCTAssertEqual(frames["unmeasured"], rect(10, 20, 790, 580), "no natural size: fills the rest")
        XCTAssertEqual(frames["box"], rect(10, 10, 790, 590), "a container at page level fills the rest")
        XCTAssertTrue(measure.calls.contains { $0.id == "wide" && $0.maxWidth == 100 }, "measured in the room left: \(measure.calls)")
        XCTAssertTrue(measure.calls.contains { $0.id == "tall" && $0.maxWidth == 200 }, "measured at its explicit width")
        XCTAssertFalse(measure.calls.contains { $0.id == "box" }, "containers are never measured")
    }

    func testStackChildrenArePlacedAbsolutelyInTheStackInOrder() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: stack
          type: stack
          x: 100
          y: 100
          width: 200
          height: 100
          children:
            - {id: background, type: rect}
            - {id: badge, type: text, text: "3", x: 90%, y: -10}
            - {id: quarter, type: rect, x: 50%, y: 50%, width: 50%, height: 50%}
        """)
        let laidOut = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["badge": Size(width: 30, height: 20)]))
        let frames = laidOut.framesByID

        XCTAssertEqual(frames["stack"], rect(100, 100, 200, 100))
        XCTAssertEqual(frames["background"], rect(0, 0, 200, 100))
        XCTAssertEqual(frames["badge"], rect(180, -10, 20, 20), "negative y kept; natural width capped at 200 - 180")
        XCTAssertEqual(frames["quarter"], rect(100, 50, 100, 50))
        XCTAssertEqual(laidOut[0].children.map(\.widget.id), ["background", "badge", "quarter"], "z-order is file order")
        XCTAssertEqual(laidOut.pageFramesByID["quarter"], rect(200, 150, 100, 50))
    }

    // MARK: Rows and columns

    func testRowSharesFreeSpaceByGrowWeights() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: weights
          type: row
          width: 300
          height: 50
          children:
            - {id: one, type: rect, grow: 1}
            - {id: two, type: rect, grow: 2}
        - id: natural-ignored
          type: row
          y: 100
          width: 300
          height: 50
          children:
            - {id: plain, type: rect, grow: 1}
            - {id: worded, type: text, text: w, grow: 1}
            - {id: based, type: rect, width: 40, grow: 2}
        """)
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["worded": Size(width: 60, height: 10)])).framesByID

        XCTAssertEqual(frames["one"], rect(0, 0, 100, 50))
        XCTAssertEqual(frames["two"], rect(100, 0, 200, 50))
        // A growing child starts from 0, not from its natural size; an explicit size gets its share on top.
        XCTAssertEqual(frames["plain"], rect(0, 0, 65, 50))
        XCTAssertEqual(frames["worded"], rect(65, 0, 65, 50))
        XCTAssertEqual(frames["based"], rect(130, 0, 170, 50))
    }

    func testRowPaddingSpacingNaturalAndFixedWidths() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: row
          type: row
          width: 400
          height: 100
          padding: 10
          spacing: 5
          children:
            - {id: natural, type: text, text: n}
            - {id: fixed, type: rect, width: 30}
            - {id: rest, type: rect, grow: 1}
            - {id: nothing, type: rect}
        """)
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["natural": Size(width: 50, height: 20)])).framesByID

        XCTAssertEqual(frames["natural"], rect(10, 10, 50, 80), "natural width; stretched across (the default align)")
        XCTAssertEqual(frames["fixed"], rect(65, 10, 30, 80))
        // 380 inner - 50 - 30 - 0 - 3 spacings of 5 = 285.
        XCTAssertEqual(frames["rest"], rect(100, 10, 285, 80))
        XCTAssertEqual(frames["nothing"], rect(390, 10, 0, 80), "no size, no natural size, no grow: zero wide")
    }

    func testColumnStacksTopToBottomWithGrowAndPercentHeights() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: column
          type: column
          width: 100
          height: 300
          spacing: 10
          children:
            - {id: title, type: text, text: t}
            - {id: body, type: rect, grow: 1}
            - {id: footer, type: rect, height: 20%}
        """)
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["title": Size(width: 50, height: 40)])).framesByID

        XCTAssertEqual(frames["title"], rect(0, 0, 100, 40))
        XCTAssertEqual(frames["body"], rect(0, 50, 100, 180))
        XCTAssertEqual(frames["footer"], rect(0, 240, 100, 60))
    }

    func testPercentSizesAreOfTheContainersInnerSize() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: row
          type: row
          width: 220
          height: 100
          padding: 10
          children:
            - {id: quarter, type: rect, width: 25%, height: 50%}
            - {id: half, type: rect, width: 50%}
        """)
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600).framesByID

        XCTAssertEqual(frames["quarter"], rect(10, 10, 50, 40), "explicit cross size under stretch sits at the start")
        XCTAssertEqual(frames["half"], rect(60, 10, 100, 80))
    }

    func testEveryAlignmentAcrossRowsAndColumns() throws {
        let expectedInRow: [(String, Rect)] = [
            ("start", rect(0, 0, 20, 20)), ("center", rect(0, 40, 20, 20)), ("end", rect(0, 80, 20, 20)), ("stretch", rect(0, 0, 20, 100)),
        ]
        for (align, expected) in expectedInRow {
            let widgets = try LayoutFixtures.widgets("""
            - id: row
              type: row
              width: 200
              height: 100
              align: \(align)
              children:
                - {id: natural, type: text, text: n}
                - {id: unsized, type: rect, width: 10}
                - {id: sized, type: rect, width: 10, height: 30}
            """)
            let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["natural": Size(width: 20, height: 20)])).framesByID
            XCTAssertEqual(frames["natural"], expected, "row align \(align)")
            XCTAssertEqual(frames["unsized"], rect(20, 0, 10, 100), "row align \(align): no natural height fills")
            let sizedY = ["start": 0, "center": 35, "end": 70, "stretch": 0][align]!
            XCTAssertEqual(frames["sized"], rect(30, sizedY, 10, 30), "row align \(align): explicit height")
        }

        let expectedInColumn: [(String, Rect)] = [
            ("start", rect(0, 0, 20, 20)), ("center", rect(40, 0, 20, 20)), ("end", rect(80, 0, 20, 20)), ("stretch", rect(0, 0, 100, 20)),
        ]
        for (align, expected) in expectedInColumn {
            let widgets = try LayoutFixtures.widgets("""
            - id: column
              type: column
              width: 100
              height: 200
              padding: 0
              align: \(align)
              children:
                - {id: natural, type: text, text: n}
            """)
            let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["natural": Size(width: 20, height: 20)])).framesByID
            XCTAssertEqual(frames["natural"], expected, "column align \(align)")
        }
    }

    func testDefaultAlignIsStretchAsDecoded() throws {
        let widgets = try LayoutFixtures.widgets("- {id: row, type: row, children: []}")
        guard case .row(let container) = widgets[0].content else { return XCTFail("not a row: \(widgets[0].content)") }
        XCTAssertEqual(container.align, .stretch)
        XCTAssertEqual(container.spacing, 0)
        XCTAssertEqual(container.padding, 0)
    }

    func testNestedContainersAreLaidOutInTheirParentsCoordinates() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: outer
          type: column
          x: 20
          y: 30
          width: 400
          height: 300
          padding: 10
          spacing: 10
          children:
            - id: header
              type: row
              height: 50
              spacing: 5
              children:
                - {id: title, type: rect, grow: 1}
                - {id: icon, type: rect, width: 100}
            - id: body
              type: row
              grow: 1
              padding: 5
              children:
                - {id: side, type: rect, width: 25%}
                - {id: main, type: rect, grow: 1}
        """)
        let laidOut = LayoutFixtures.layout(widgets, width: 800, height: 600)
        let frames = laidOut.framesByID

        XCTAssertEqual(frames["outer"], rect(20, 30, 400, 300))
        XCTAssertEqual(frames["header"], rect(10, 10, 380, 50))
        XCTAssertEqual(frames["title"], rect(0, 0, 275, 50))
        XCTAssertEqual(frames["icon"], rect(280, 0, 100, 50))
        XCTAssertEqual(frames["body"], rect(10, 70, 380, 220))
        // 25% of 370 is 92.5: the shared edge at page x 127.5 rounds once, to 128, for both neighbours.
        XCTAssertEqual(frames["side"], rect(5, 5, 93, 210))
        XCTAssertEqual(frames["main"], rect(98, 5, 277, 210))
        XCTAssertEqual(laidOut.pageFramesByID["main"], rect(128, 105, 277, 210))
        XCTAssertEqual(laidOut.pageFramesByID["body"].map { $0.maxX }, laidOut.pageFramesByID["main"].map { $0.maxX + 5 })
    }

    func testChildWithXOrYLeavesTheFlowAndIsPlacedInTheContainer() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: row
          type: row
          x: 50
          y: 50
          width: 300
          height: 100
          padding: 10
          spacing: 10
          children:
            - {id: first, type: rect, grow: 1}
            - {id: overlay, type: rect, x: 0, y: 0}
            - {id: second, type: rect, grow: 1}
            - {id: pin, type: text, text: p, x: 50%}
        """)
        let laidOut = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["pin": Size(width: 40, height: 20)]))
        let frames = laidOut.framesByID

        // Two children in the flow, one spacing: (280 - 10) / 2 each.
        XCTAssertEqual(frames["first"], rect(10, 10, 135, 80))
        XCTAssertEqual(frames["second"], rect(155, 10, 135, 80))
        XCTAssertEqual(frames["overlay"], rect(0, 0, 300, 100), "relative to the container's frame, padding ignored")
        XCTAssertEqual(frames["pin"], rect(150, 0, 40, 20))
        XCTAssertEqual(laidOut[0].children.map(\.widget.id), ["first", "overlay", "second", "pin"], "drawn in file order")
    }

    func testContainersInContainersTakeTheirNaturalSize() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: outer
          type: column
          width: 500
          height: 400
          align: start
          children:
            - id: toolbar
              type: row
              spacing: 5
              padding: 4
              align: center
              children:
                - {id: a, type: text, text: a}
                - {id: b, type: text, text: b}
                - {id: c, type: rect, width: 12, height: 6}
                - {id: floating, type: rect, x: 0, y: 0, width: 1000, height: 1000}
            - {id: after, type: rect, height: 10}
        - id: bar
          type: row
          y: 450
          width: 400
          height: 60
          children:
            - id: group
              type: column
              padding: 2
              children:
                - {id: g1, type: text, text: g1}
                - {id: g2, type: text, text: g2}
            - {id: filler, type: rect, grow: 1}
        """)
        let measure = Measure(["a": Size(width: 30, height: 10), "b": Size(width: 40, height: 20),
                               "g1": Size(width: 50, height: 10), "g2": Size(width: 70, height: 10)])
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: measure).framesByID

        // 30 + 40 + 12 + 2 spacings of 5 + 2 paddings of 4 = 100 wide; 20 + 8 = 28 tall; the out-of-flow child
        // does not count.
        XCTAssertEqual(frames["toolbar"], rect(0, 0, 100, 28))
        XCTAssertEqual(frames["a"], rect(4, 9, 30, 10))
        XCTAssertEqual(frames["b"], rect(39, 4, 40, 20))
        XCTAssertEqual(frames["c"], rect(84, 11, 12, 6))
        XCTAssertEqual(frames["after"], rect(0, 28, 500, 10), "align start without a natural width fills across")
        // The column's natural width is its widest child plus the padding.
        XCTAssertEqual(frames["group"], rect(0, 0, 74, 60))
        XCTAssertEqual(frames["g2"], rect(2, 12, 70, 10))
        XCTAssertEqual(frames["filler"], rect(74, 0, 326, 60))
    }

    func testTextIsMeasuredAtTheWidthItGets() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: column
          type: column
          width: 100
          height: 200
          children:
            - {id: paragraph, type: text, text: p}
        - id: row
          type: row
          y: 300
          width: 200
          height: 100
          align: start
          children:
            - {id: fixed, type: rect, width: 100}
            - {id: caption, type: text, text: c, grow: 1}
        """)
        let measure = Measure(["paragraph": Size(width: 250, height: 20), "caption": Size(width: 250, height: 20)],
                              wrapping: ["paragraph", "caption"])
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: measure).framesByID

        XCTAssertEqual(frames["paragraph"], rect(0, 0, 100, 60), "three lines at the column's width")
        XCTAssertEqual(frames["caption"], rect(100, 0, 100, 60), "three lines at the width its grow gave it")
    }

    // MARK: Overflow and rounding

    func testChildrenThatDoNotFitOverflowAndNothingIsNegative() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: row
          type: row
          width: 100
          height: 50
          spacing: 10
          children:
            - {id: first, type: rect, width: 80}
            - {id: second, type: rect, width: 80}
            - {id: squeezed, type: rect, grow: 1}
        - id: cramped
          type: column
          y: 100
          width: 50
          height: 30
          padding: 40
          align: center
          children:
            - {id: inside, type: rect, grow: 1}
            - {id: natural, type: text, text: n}
        - {id: huge, type: rect, x: 700, width: 1000000000000, height: 10}
        - {id: offpage, type: rect, x: 900, y: 700}
        """)
        let laidOut = LayoutFixtures.layout(widgets, width: 800, height: 600, measure: Measure(["natural": Size(width: 20, height: 20)]))
        let frames = laidOut.framesByID

        XCTAssertEqual(frames["first"], rect(0, 0, 80, 50))
        XCTAssertEqual(frames["second"], rect(90, 0, 80, 50), "keeps its size past the row's end")
        XCTAssertEqual(frames["squeezed"], rect(180, 0, 0, 50), "no free space to share")
        XCTAssertEqual(frames["cramped"], rect(0, 100, 50, 30))
        XCTAssertEqual(frames["inside"], rect(40, 40, 0, 0), "the padding leaves an empty inside")
        XCTAssertEqual(frames["natural"], rect(30, 40, 20, 20))
        XCTAssertEqual(frames["offpage"], rect(900, 700, 0, 0), "no room left: empty, never negative")
        XCTAssertGreaterThan(frames["huge"]?.width ?? 0, 1_000_000, "clamped, not trapped")
        for entry in laidOut.flatMap({ $0.flattened() }) {
            XCTAssertGreaterThanOrEqual(entry.frame.width, 0, "\(entry.widget.id ?? "?")")
            XCTAssertGreaterThanOrEqual(entry.frame.height, 0, "\(entry.widget.id ?? "?")")
        }

        let onEmptyPage = LayoutFixtures.layout(widgets, width: -5, height: 0).framesByID
        XCTAssertEqual(onEmptyPage["row"], rect(0, 0, 100, 50))
        XCTAssertEqual(onEmptyPage["offpage"], rect(900, 700, 0, 0))
    }

    func testThreeGrowingChildrenTileAHundredPixelsExactly() throws {
        let widgets = try LayoutFixtures.widgets("""
        - id: row
          type: row
          width: 100
          height: 10
          children:
            - {id: a, type: rect, grow: 1}
            - {id: b, type: rect, grow: 1}
            - {id: c, type: rect, grow: 1}
        """)
        let frames = LayoutFixtures.layout(widgets, width: 800, height: 600).framesByID
        XCTAssertEqual(frames["a"], rect(0, 0, 33, 10))
        XCTAssertEqual(frames["b"], rect(33, 0, 34, 10))
        XCTAssertEqual(frames["c"], rect(67, 0, 33, 10))
    }

    func testNeighboursShareEdgesAtAnyOffsetAndCount() throws {
        for count in 2...7 {
            for width in [97, 100, 101, 333] {
                for x in ["0", "10.5", "3.3", "-7.25"] {
                    let children = (0..<count).map { "    - {id: c\($0), type: rect, grow: 1}" }.joined(separator: "\n")
                    let widgets = try LayoutFixtures.widgets("""
                    - id: row
                      type: row
                      x: \(x)
                      width: \(width)
                      height: 10
                      spacing: 1.5
                      padding: 0.25
                      children:
                    \(children)
                    """)
                    let row = LayoutFixtures.layout(widgets, width: 800, height: 600)[0]
                    let frames = row.children.map(\.frame)
                    let label = "\(count) children, width \(width), x \(x)"
                    let spacingGaps = zip(frames, frames.dropFirst()).map { $1.x - $0.maxX }
                    XCTAssertTrue(spacingGaps.allSatisfy { $0 == 1 || $0 == 2 }, "\(label): \(frames)")
                    let widths = frames.map(\.width)
                    XCTAssertLessThanOrEqual(widths.max()! - widths.min()!, 1, "\(label): \(frames)")
                    XCTAssertLessThanOrEqual(frames.last!.maxX, row.frame.width, label)
                    XCTAssertGreaterThanOrEqual(frames.last!.maxX, row.frame.width - 1, label)
                }
            }
        }
    }
}
