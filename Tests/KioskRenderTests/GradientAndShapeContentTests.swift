import KioskCore
import KioskRender
import XCTest

final class GradientAndShapeContentTests: XCTestCase {
    private let red = Color(rgb: 0xFF0000), blue = Color(rgb: 0x0000FF), green = Color(rgb: 0x00FF00)

    // MARK: linear gradient

    func testLinearGradientEndpointsFollowTheAngle() throws {
        let size = Size(width: 100, height: 60)
        func surface(_ angle: Double) throws -> LayerSurface {
            try render(RectContent(fill: .linearGradient(colors: [red, blue], angle: angle)), size: size)
        }
        let horizontal = try surface(0)
        XCTAssertGreaterThan(horizontal.argb(0, 30).r, 245, "0°: red at the left")
        XCTAssertGreaterThan(horizontal.argb(99, 30).b, 245, "0°: blue at the right")
        XCTAssertEqual(Double(horizontal.argb(50, 0).r), 128, accuracy: 6, "0°: halfway in the middle column")
        XCTAssertEqual(horizontal.argb(50, 0).r, horizontal.argb(50, 59).r, "0°: columns are uniform")

        let vertical = try surface(90)
        XCTAssertGreaterThan(vertical.argb(50, 0).r, 240, "90°: red at the top")
        XCTAssertGreaterThan(vertical.argb(50, 59).b, 240, "90°: blue at the bottom")
        XCTAssertEqual(vertical.argb(0, 30).r, vertical.argb(99, 30).r, "90°: rows are uniform")

        let reversed = try surface(180)
        XCTAssertGreaterThan(reversed.argb(0, 30).b, 245, "180°: blue at the left")
        XCTAssertGreaterThan(reversed.argb(99, 30).r, 245, "180°: red at the right")

        // 45° on a non-square rectangle: the line spans the projection, so the corners get the end colours exactly.
        let diagonal = try surface(45)
        XCTAssertGreaterThan(diagonal.argb(0, 0).r, 245, "45°: top-left corner is red")
        XCTAssertGreaterThan(diagonal.argb(99, 59).b, 245, "45°: bottom-right corner is blue")
        let topRight = diagonal.argb(99, 0), bottomLeft = diagonal.argb(0, 59)
        XCTAssertTrue(topRight.r > 20 && topRight.b > 20, "45°: top-right is a mix: \(topRight)")
        XCTAssertEqual(Double(topRight.r), Double(bottomLeft.b), accuracy: 8, "45° is symmetric about the centre")
    }

    func testLinearGradientSpacesColoursEvenly() throws {
        let content = RectContent(fill: .linearGradient(colors: [red, green, blue], angle: 0))
        XCTAssertTrue(content.isOpaque)
        let surface = try render(content, size: Size(width: 201, height: 4))
        XCTAssertGreaterThan(surface.argb(0, 2).r, 245)
        XCTAssertGreaterThan(surface.argb(100, 2).g, 245, "the middle colour sits halfway")
        XCTAssertLessThan(surface.argb(100, 2).r, 10)
        XCTAssertGreaterThan(surface.argb(200, 2).b, 245)
        XCTAssertFalse(RectContent(fill: .linearGradient(colors: [red, Color(rgb: 0, alpha: 0.5)], angle: 0)).isOpaque)
        XCTAssertFalse(RectContent(fill: .linearGradient(colors: [], angle: 0)).isOpaque)
        let single = try render(RectContent(fill: .linearGradient(colors: [green], angle: 30)), size: Size(width: 8, height: 8))
        XCTAssertTrue(single.argb(4, 4) == (255, 0, 255, 0), "one colour fills solidly")
    }

    func testGradientGolden() throws {
        let content = RectContent(fill: .linearGradient(colors: [Color(rgb: 0xFA9E28), Color(rgb: 0xD6336C),
                                                                 Color(rgb: 0x3B5BDB)], angle: 30),
                                  cornerRadius: 12, border: RectContent.Border(width: 2, color: .white))
        // Cairo's rasteriser is exact across machines for shapes; 2 levels absorb pixman rounding differences.
        assertMatchesGolden(try render(content, size: Size(width: 160, height: 90)), name: "rect-linear-gradient",
                            tolerance: GoldenTolerance.shapes)
    }

    // MARK: sparkline

    func testSparklinePointsSpanTheWidthAndAutoRange() throws {
        let content = SparklineContent(values: [0, 10, 5], color: red, lineWidth: 2)
        XCTAssertEqual(content.kind, "sparkline")
        let size = Size(width: 100, height: 40)
        let points = content.points(in: size)
        let r = content.dotRadius  // 3
        XCTAssertEqual(points.count, 3)
        XCTAssertEqual(points[0].x, r, accuracy: 1e-9)
        XCTAssertEqual(points[0].y, 40 - r, accuracy: 1e-9, "the minimum sits at the bottom")
        XCTAssertEqual(points[1].x, 50, accuracy: 1e-9)
        XCTAssertEqual(points[1].y, r, accuracy: 1e-9, "the maximum sits at the top")
        XCTAssertEqual(points[2].x, 100 - r, accuracy: 1e-9)
        XCTAssertEqual(points[2].y, 20, accuracy: 1e-9)

        let surface = try render(content, size: size)
        XCTAssertGreaterThan(surface.argb(Int(points[1].x), Int(points[1].y)).a, 200, "the peak is on the line")
        XCTAssertGreaterThan(surface.argb(25, 20).a, 150, "halfway up the first segment")
        XCTAssertEqual(surface.argb(25, 36).a, 0, "below the line stays clear without a fill")
        XCTAssertTrue(surface.argb(97, 20) == (255, 255, 0, 0), "the last point's dot")
    }

    func testSparklineFlatSeriesFixedRangeFillAndEmpty() throws {
        let flat = SparklineContent(values: [4, 4, 4, 4], color: red)
        XCTAssertTrue(flat.points(in: Size(width: 50, height: 30)).allSatisfy { $0.y == 15 }, "a flat series in the middle")
        let flatSurface = try render(flat, size: Size(width: 50, height: 30))
        XCTAssertGreaterThan(flatSurface.argb(25, 15).a, 200)
        XCTAssertEqual(flatSurface.coveredPixels(rows: 0..<10), 0)

        let ranged = SparklineContent(values: [50, 150], color: red, range: 0...100)
        let points = ranged.points(in: Size(width: 60, height: 30))
        XCTAssertEqual(points[0].y, 15, accuracy: 1e-9, "50 of 0...100 is halfway")
        XCTAssertEqual(points[1].y, ranged.dotRadius, accuracy: 1e-9, "150 is clamped to the top")

        let filled = try render(SparklineContent(values: [1, 2, 3], color: red, fill: blue), size: Size(width: 60, height: 30))
        XCTAssertTrue(filled.argb(30, 28) == (255, 0, 0, 255), "the fill reaches the bottom under the line")
        XCTAssertEqual(filled.argb(5, 2).a, 0, "above the line stays clear")

        let empty = try render(SparklineContent(values: [], color: red), size: Size(width: 20, height: 10))
        XCTAssertEqual(empty.coverage.count, 0)
        let gaps = SparklineContent(values: [1, .nan, 3], color: red)
        XCTAssertEqual(gaps.points(in: Size(width: 20, height: 10)).count, 2, "non-finite values are left out")
    }

    func testSparklineGolden() throws {
        let content = SparklineContent(values: [3, 5, 4, 8, 6, 9, 7, 12, 10, 11], color: Color(rgb: 0x4DABF7),
                                       fill: Color(rgb: 0x4DABF7, alpha: 0.25), lineWidth: 2)
        assertMatchesGolden(try render(content, size: Size(width: 160, height: 60)), name: "sparkline", tolerance: GoldenTolerance.shapes)
    }

    // MARK: box

    func testBoxDrawsFillContentAndBorderAndClipsToTheRoundedInside() throws {
        let inner = RectContent(color: green)  // fills all of its surface
        let box = BoxContent(fill: .solid(blue), cornerRadius: 20, border: RectContent.Border(width: 4, color: red),
                             padding: 0, content: inner)
        XCTAssertEqual(box.kind, "box+rect")
        XCTAssertFalse(box.isOpaque, "rounded corners")
        let surface = try render(box, size: Size(width: 100, height: 60))
        XCTAssertTrue(surface.argb(50, 30) == (255, 0, 255, 0), "inner content in the middle")
        XCTAssertTrue(surface.argb(50, 1) == (255, 255, 0, 0), "the border is drawn over the content")
        XCTAssertEqual(surface.argb(1, 1).a, 0, "the content is clipped to the rounded corner")
        XCTAssertEqual(surface.argb(98, 58).a, 0)
    }

    func testBoxPaddingInsetsTheContent() throws {
        let box = BoxContent(fill: .solid(blue), padding: BoxContent.Insets(top: 10, left: 20, bottom: 5, right: 15),
                             content: RectContent(color: green))
        XCTAssertTrue(box.isOpaque)
        XCTAssertEqual(box.contentRect(in: Size(width: 100, height: 50)), Rect(x: 20, y: 10, width: 65, height: 35))
        let surface = try render(box, size: Size(width: 100, height: 50))
        XCTAssertTrue(surface.argb(19, 25) == (255, 0, 0, 255), "padding shows the box fill")
        XCTAssertTrue(surface.argb(20, 25) == (255, 0, 255, 0), "content starts after the left padding")
        XCTAssertTrue(surface.argb(84, 44) == (255, 0, 255, 0), "content's last pixel")
        XCTAssertTrue(surface.argb(85, 44) == (255, 0, 0, 255), "right padding")
        XCTAssertTrue(surface.argb(50, 45) == (255, 0, 0, 255), "bottom padding")

        let text = try render(BoxContent(fill: .solid(blue), padding: 10,
                                         content: TextContent("Padded", font: "Sans 20", color: .white)),
                              size: Size(width: 200, height: 60))
        var whiteOutside = 0, whiteInside = 0
        for y in 0..<60 { for x in 0..<200 where text.argb(x, y).r > 128 {
            if x < 10 || y < 10 || x >= 190 || y >= 50 { whiteOutside += 1 } else { whiteInside += 1 }
        } }
        XCTAssertEqual(whiteOutside, 0, "text stays inside the padding")
        XCTAssertGreaterThan(whiteInside, 50)
        XCTAssertFalse(BoxContent(content: RectContent(color: green)).isOpaque, "no fill: not opaque")
    }

    func testBoxGolden() throws {
        let box = BoxContent(fill: .linearGradient(colors: [Color(rgb: 0x1E2230), Color(rgb: 0x2B3245)], angle: 90),
                             cornerRadius: 14, border: RectContent.Border(width: 2, color: Color(rgb: 0x5C7CFA)),
                             padding: 12, content: ProgressContent(value: 0.62, fillColor: Color(rgb: 0x51CF66)))
        assertMatchesGolden(try render(box, size: Size(width: 180, height: 48)), name: "box-progress", tolerance: GoldenTolerance.shapes)
    }

    // MARK: button

    func testButtonStatesLookDifferent() throws {
        func button(_ state: ButtonContent.State) -> ButtonContent {
            ButtonContent(label: "Start", font: "Sans Bold 20", textColor: .white, fill: .solid(Color(rgb: 0x2F9E44)),
                          cornerRadius: 10, border: RectContent.Border(width: 2, color: Color(rgb: 0x1B5E20)),
                          state: state)
        }
        let size = Size(width: 160, height: 56)
        let normal = try render(button(.normal), size: size)
        let pressed = try render(button(.pressed), size: size)
        let disabled = try render(button(.disabled), size: size)
        XCTAssertEqual(button(.normal).kind, "button")

        // Fill sampled in a corner of the face, away from the label.
        let face = normal.argb(12, 28), pressedFace = pressed.argb(12, 28), disabledFace = disabled.argb(12, 28)
        XCTAssertTrue(face == (255, 0x2F, 0x9E, 0x44), "\(face)")
        XCTAssertEqual(Double(pressedFace.g), Double(0x9E) * 0.8, accuracy: 2, "pressed is darker: \(pressedFace)")
        XCTAssertTrue(disabledFace.r == disabledFace.g && disabledFace.g == disabledFace.b, "disabled is grey: \(disabledFace)")

        // The label: pressed moves it down one pixel; disabled fades it.
        func labelRows(_ s: LayerSurface) -> (top: Int, bright: Int) {
            var top = Int.max, bright = 0
            for y in 0..<size.height { for x in 20..<140 where s.argb(x, y).r > 200 && s.argb(x, y).b > 200 {
                top = min(top, y); bright += 1
            } }
            return (top, bright)
        }
        let normalLabel = labelRows(normal), pressedLabel = labelRows(pressed), disabledLabel = labelRows(disabled)
        XCTAssertGreaterThan(normalLabel.bright, 50)
        XCTAssertEqual(pressedLabel.top, normalLabel.top + 1, "pressed label is 1 px lower")
        XCTAssertEqual(disabledLabel.bright, 0, "a 40 % label never reaches white")

        let bytes = [normal, pressed, disabled].map { Array(UnsafeRawBufferPointer(start: $0.bytes, count: $0.byteCount)) }
        XCTAssertNotEqual(bytes[0], bytes[1])
        XCTAssertNotEqual(bytes[0], bytes[2])
        XCTAssertNotEqual(bytes[1], bytes[2])
        for (state, surface) in zip(ButtonContent.State.allCases, [normal, pressed, disabled]) {
            assertMatchesGolden(surface, name: "button-\(state.rawValue)", tolerance: GoldenTolerance.text, maxDifferingPixelsFraction: GoldenTolerance.textFraction)
        }
    }
}
