import KioskCore
import KioskRender
import XCTest

/// Output rotation in the shadow compositor: items laid out in scene coordinates land turned on the panel, pixel
/// for pixel, and damage turns with them.
final class OutputRotationTests: XCTestCase {
    private let panel = Size(width: 40, height: 30)

    func testParsingAcceptsQuarterTurnsOnly() {
        XCTAssertEqual(["0", "90", "180", "270"].compactMap(OutputRotation.init(parsing:)),
                       [.degrees0, .degrees90, .degrees180, .degrees270])
        for bad in ["45", "-90", "360", "", "90.0", "ninety", " 90"] {
            XCTAssertNil(OutputRotation(parsing: bad), bad)
        }
        XCTAssertEqual(OutputRotation.degrees90.sceneSize(forPanel: panel), Size(width: 30, height: 40))
        XCTAssertEqual(OutputRotation.degrees180.sceneSize(forPanel: panel), panel)
    }

    func testPanelRectAndSceneRectAreInverse() {
        for rotation in OutputRotation.allCases {
            let scene = rotation.sceneSize(forPanel: panel)
            let rect = Rect(x: 3, y: 5, width: 7, height: 2)
            let onPanel = rotation.panelRect(rect, sceneSize: scene)
            XCTAssertTrue(Rect(size: panel).intersection(onPanel) == onPanel, "\(rotation): \(onPanel) leaves the panel")
            XCTAssertEqual(rotation.sceneRect(onPanel, sceneSize: scene), rect, "\(rotation)")
        }
        // 90: the scene's top-left pixel lands in the panel's top-right corner.
        XCTAssertEqual(OutputRotation.degrees90.panelRect(Rect(x: 0, y: 0, width: 1, height: 1), sceneSize: Size(width: 30, height: 40)),
                       Rect(x: 39, y: 0, width: 1, height: 1))
    }

    /// A distinct colour in each corner of the scene: the scene's top ends up on the panel's right at 90, at the
    /// bottom upside down at 180, on the left at 270.
    func testSceneCornersLandInThePanelCornersTheRotationNames() throws {
        let red = Color(rgb: 0xFF0000), blue = Color(rgb: 0x0000FF), white = Color(rgb: 0xFFFFFF)
        typealias RGB = (r: Int, g: Int, b: Int)
        let (R, G, B, W): (RGB, RGB, RGB, RGB) = ((255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255))
        // Panel corners top-left, top-right, bottom-left, bottom-right for a scene with red top-left, green
        // top-right, blue bottom-left and white bottom-right.
        let expected: [OutputRotation: [RGB]] = [
            .degrees0: [R, G, B, W],
            .degrees90: [B, R, W, G],
            .degrees180: [W, B, G, R],
            .degrees270: [G, W, R, B],
        ]
        for rotation in OutputRotation.allCases {
            let compositor = try ShadowCompositor(size: panel, background: Color(rgb: 0x404040), rotation: rotation)
            let scene = compositor.sceneSize
            XCTAssertEqual(scene, rotation.sceneSize(forPanel: panel))
            let s = 6
            let items = [
                CompositeItem(source: .color(red), frame: Rect(x: 0, y: 0, width: s, height: s)),
                // Green as a surface, so both painting paths are turned.
                CompositeItem(source: .surface(solidSurface(Size(width: s, height: s), argb: 0xFF00_FF00)),
                              frame: Rect(x: scene.width - s, y: 0, width: s, height: s)),
                CompositeItem(source: .color(blue), frame: Rect(x: 0, y: scene.height - s, width: s, height: s)),
                CompositeItem(source: .color(white), frame: Rect(x: scene.width - s, y: scene.height - s, width: s, height: s)),
            ]
            compositor.compose(items, damage: [Rect(size: scene)])
            let shot = compositor.snapshot()
            XCTAssertEqual(shot.count, panel.width * panel.height * 4, "snapshots are of the panel")
            let corners = [(0, 0), (panel.width - 1, 0), (0, panel.height - 1), (panel.width - 1, panel.height - 1)]
            for (corner, want) in zip(corners, expected[rotation]!) {
                assertRGB(rgb(shot, width: panel.width, corner.0, corner.1), want, "\(rotation)° corner \(corner)")
            }
            // The middle of the panel is background: the squares did not spread.
            assertRGB(rgb(shot, width: panel.width, panel.width / 2, panel.height / 2), (0x40, 0x40, 0x40), "\(rotation)° centre")
        }
    }

    /// Every pixel of a surface whose pixels are all different lands on exactly the panel pixel the rotation says,
    /// unblended: quarter turns stay pixel-exact.
    func testQuarterTurnsArePixelExact() throws {
        let layerSize = Size(width: 13, height: 9)
        let surface = LayerSurface(size: layerSize, isOpaque: true)
        func scenePixel(_ x: Int, _ y: Int) -> UInt32 { 0xFF00_0000 | UInt32(x * 19) << 16 | UInt32(y * 27) << 8 | UInt32((x + y) * 5) }
        for y in 0..<layerSize.height {
            for x in 0..<layerSize.width {
                surface.bytes.storeBytes(of: scenePixel(x, y), toByteOffset: y * surface.stride + x * 4, as: UInt32.self)
            }
        }
        let origin = (x: 4, y: 7)
        for rotation in OutputRotation.allCases {
            let compositor = try ShadowCompositor(size: panel, rotation: rotation)
            let scene = compositor.sceneSize
            let frame = Rect(x: origin.x, y: origin.y, width: layerSize.width, height: layerSize.height)
            compositor.compose([CompositeItem(source: .surface(surface), frame: frame)], damage: [Rect(size: scene)])
            let shot = compositor.snapshot()
            var wrong = 0
            for y in 0..<layerSize.height {
                for x in 0..<layerSize.width {
                    let target = rotation.panelRect(Rect(x: origin.x + x, y: origin.y + y, width: 1, height: 1), sceneSize: scene)
                    let offset = (target.y * panel.width + target.x) * 4
                    let got = shot[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } & 0xFF_FFFF
                    if got != scenePixel(x, y) & 0xFF_FFFF { wrong += 1 }
                }
            }
            XCTAssertEqual(wrong, 0, "\(rotation)°: pixels not where the rotation puts them")
            let covered = shot.withUnsafeBytes { raw in
                (0..<panel.width * panel.height).filter { raw.load(fromByteOffset: $0 * 4, as: UInt32.self) & 0xFF_FFFF != 0 }.count
            }
            XCTAssertLessThanOrEqual(covered, layerSize.width * layerSize.height, "\(rotation)°: nothing outside the layer's pixels")
        }
    }

    /// A small scene rectangle of damage changes exactly its turned rectangle on the panel, and that rectangle is
    /// what the compositor reports and copies (the FB_DAMAGE_CLIPS of the present).
    func testDamageIsTurnedOntoThePanel() throws {
        for rotation in OutputRotation.allCases {
            let compositor = try ShadowCompositor(size: panel, background: Color(rgb: 0x102030), rotation: rotation)
            let scene = compositor.sceneSize
            let image = TestImage(width: panel.width, height: panel.height)
            compositor.compose([], damage: [Rect(size: scene)])
            _ = compositor.copy(into: image.buffer(index: 0))
            let before = compositor.snapshot()

            let damage = Rect(x: 2, y: 3, width: 5, height: 4)
            let everywhere = CompositeItem(source: .color(Color(rgb: 0xF0E0D0)), frame: Rect(size: scene))
            let composed = compositor.compose([everywhere], damage: [damage])
            let onPanel = rotation.panelRect(damage, sceneSize: scene)
            XCTAssertEqual(composed, [onPanel], "\(rotation)°")
            let after = compositor.snapshot()
            for y in 0..<panel.height {
                for x in 0..<panel.width {
                    let inside = x >= onPanel.x && x < onPanel.maxX && y >= onPanel.y && y < onPanel.maxY
                    let pixel = rgb(after, width: panel.width, x, y)
                    if inside {
                        assertRGB(pixel, (0xF0, 0xE0, 0xD0), "\(rotation)° (\(x), \(y)) inside the damage")
                    } else {
                        XCTAssertTrue(pixel == rgb(before, width: panel.width, x, y), "\(rotation)° (\(x), \(y)) outside changed")
                    }
                }
            }
            let copied = compositor.copy(into: image.buffer(index: 0))
            XCTAssertEqual(copied.rects, [onPanel], "\(rotation)°")
            XCTAssertEqual(copied.bytes, damage.area * 4)
            XCTAssertTrue(image.diff(snapshot: after).matches, "\(rotation)°: the scanout buffer equals the shadow buffer")
        }
    }

    /// A layer item turned by a quarter about its centre: its pixels land turned around that centre, painted
    /// through the item's transform, and it never hides what is below it.
    func testRotatedItemPaintsTurnedAboutItsCentre() throws {
        let compositor = try ShadowCompositor(size: panel, background: Color(rgb: 0x000000))
        // 10x4 surface: left half red, right half blue; centre (15, 12) on screen, so it spans x 5..<25, y 10..<14.
        let surface = LayerSurface(size: Size(width: 10, height: 4), isOpaque: true)
        for y in 0..<4 {
            for x in 0..<10 {
                surface.bytes.storeBytes(of: x < 5 ? UInt32(0xFFFF_0000) : 0xFF00_00FF, toByteOffset: y * surface.stride + x * 4, as: UInt32.self)
            }
        }
        // Unit square → rotate 90° clockwise about (15, 12): x' = 15 - (y - 12), y' = 12 + (x - 15) with x = 10 + 10u,
        // y = 10 + 4v.
        let transform = AffineTransform.translation(x: 15, y: 12)
            .concatenating(.rotation(.pi / 2))
            .concatenating(.translation(x: -5, y: -2))
            .concatenating(.scale(x: 10, y: 4))
        let bounds = transform.boundingRect(width: 1, height: 1)
        XCTAssertEqual(bounds, Rect(x: 13, y: 7, width: 4, height: 10))
        let below = CompositeItem(source: .color(Color(rgb: 0x00FF00)), frame: Rect(size: panel))
        compositor.compose([below, CompositeItem(source: .surface(surface), frame: bounds, transform: transform)],
                           damage: [Rect(size: panel)])
        let shot = compositor.snapshot()
        // Turned clockwise, the left (red) half is now on top, the right (blue) half below.
        for y in 7..<12 { for x in 13..<17 { assertRGB(rgb(shot, width: panel.width, x, y), (255, 0, 0), "(\(x), \(y))") } }
        for y in 12..<17 { for x in 13..<17 { assertRGB(rgb(shot, width: panel.width, x, y), (0, 0, 255), "(\(x), \(y))") } }
        // Outside the turned layer the green item below shows: a rotated item is not an opaque cover.
        for (x, y) in [(12, 10), (17, 10), (14, 6), (14, 17), (0, 0)] {
            assertRGB(rgb(shot, width: panel.width, x, y), (0, 255, 0), "(\(x), \(y))")
        }
    }
}
