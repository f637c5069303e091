import KioskCore
import KioskRender
import XCTest

final class ShadowCompositorTests: XCTestCase {
    private let red: UInt32 = 0xFFFF_0000
    private let blue: UInt32 = 0xFF00_00FF

    func testComposeChangesOnlyPixelsInsideTheDamage() throws {
        let size = Size(width: 64, height: 48)
        let compositor = try ShadowCompositor(size: size)
        let full = Rect(size: size)
        compositor.compose([CompositeItem(source: .surface(solidSurface(size, argb: red)), frame: full)], damage: [full])
        let before = compositor.snapshot()

        let damage = Rect(x: 10, y: 5, width: 20, height: 7)
        let composed = compositor.compose(
            [CompositeItem(source: .surface(solidSurface(size, argb: blue)), frame: full)], damage: [damage])
        XCTAssertEqual(composed, [damage])
        let after = compositor.snapshot()
        for y in 0..<size.height {
            for x in 0..<size.width {
                let inside = x >= damage.x && x < damage.maxX && y >= damage.y && y < damage.maxY
                let pixel = rgb(after, width: size.width, x, y)
                if inside {
                    XCTAssertTrue(pixel == (0, 0, 255), "(\(x), \(y)) inside the damage is \(pixel)")
                } else {
                    XCTAssertTrue(pixel == rgb(before, width: size.width, x, y), "(\(x), \(y)) outside changed")
                }
            }
        }
    }

    func testFirstCopyIsWholeFrameThenOnlyTheDamage() throws {
        let size = Size(width: 40, height: 30)
        let compositor = try ShadowCompositor(size: size, background: Color(rgb: 0x204060))
        let image = TestImage(width: 40, height: 30, fill: 0xAA)

        let first = compositor.copy(into: image.buffer(index: 0))
        XCTAssertEqual(first.bytes, 40 * 30 * 4)
        XCTAssertEqual(first.rects, [Rect(size: size)])
        XCTAssertTrue(image.diff(snapshot: compositor.snapshot()).matches)

        XCTAssertEqual(compositor.copy(into: image.buffer(index: 0)).bytes, 0, "nothing composed since")

        let a = Rect(x: 2, y: 3, width: 5, height: 4), b = Rect(x: 30, y: 20, width: 6, height: 2)
        compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))], damage: [a])
        compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))], damage: [b])
        let second = compositor.copy(into: image.buffer(index: 0))
        XCTAssertEqual(second.bytes, (a.area + b.area) * 4)
        XCTAssertEqual(Set(second.rects), [a, b])
        XCTAssertTrue(image.diff(snapshot: compositor.snapshot()).matches)
    }

    /// Two buffers alternate as in double buffering: each comes back having missed the frame shown meanwhile, so it
    /// must receive both frames' damage. After every copy the back buffer must equal the shadow buffer everywhere.
    func testAlternatingBuffersReceiveTheDamageTheyMissed() throws {
        let size = Size(width: 96, height: 64)
        let compositor = try ShadowCompositor(size: size, background: Color(rgb: 0x101820))
        let buffers = [TestImage(width: 96, height: 64, fill: 0x33), TestImage(width: 96, height: 64, fill: 0x77)]
        let box = solidSurface(Size(width: 12, height: 10), argb: 0xFFE0_8020)
        var previousDamage: [Rect] = []

        for frame in 0..<12 {
            let old = Rect(x: (frame - 1) * 7, y: (frame - 1) * 4, width: 12, height: 10)
            let new = Rect(x: frame * 7, y: frame * 4, width: 12, height: 10)
            let damage = frame == 0 ? [Rect(size: size)] : [old, new]
            compositor.compose([CompositeItem(source: .surface(box), frame: new)], damage: damage)

            let back = buffers[frame % 2]
            let copied = compositor.copy(into: back.buffer(index: frame % 2))
            let diff = back.diff(snapshot: compositor.snapshot())
            XCTAssertTrue(diff.matches, "frame \(frame): back buffer \(frame % 2) differs from the shadow: \(diff)")

            if frame >= 2 {
                let expected = pixelCount(of: damage + previousDamage, in: size)
                XCTAssertEqual(copied.bytes, expected * 4, "frame \(frame): the union of two frames' damage")
                XCTAssertEqual(copied.rects.reduce(0) { $0 + $1.area } * 4, copied.bytes, "rects do not overlap")
            } else {
                XCTAssertEqual(copied.bytes, 96 * 64 * 4, "frame \(frame): first copy into a buffer is whole")
            }
            previousDamage = damage
        }
    }

    func testOverlappingDamageIsCopiedOnce() throws {
        let size = Size(width: 50, height: 50)
        let compositor = try ShadowCompositor(size: size)
        let image = TestImage(width: 50, height: 50)
        _ = compositor.copy(into: image.buffer(index: 3))
        let a = Rect(x: 0, y: 0, width: 20, height: 20), b = Rect(x: 10, y: 10, width: 20, height: 20)
        let composed = compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))],
                                          damage: [a, b])
        XCTAssertEqual(composed.reduce(0) { $0 + $1.area }, 700)
        XCTAssertEqual(compositor.copy(into: image.buffer(index: 3)).bytes, 700 * 4)
    }

    func testDamageOffScreenComposesAndCopiesNothing() throws {
        let size = Size(width: 20, height: 20)
        let compositor = try ShadowCompositor(size: size)
        let image = TestImage(width: 20, height: 20)
        _ = compositor.copy(into: image.buffer(index: 0))
        let composed = compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))],
                                          damage: [Rect(x: 25, y: 0, width: 10, height: 10), Rect(x: 3, y: 3, width: 0, height: 5)])
        XCTAssertEqual(composed, [])
        XCTAssertTrue(compositor.copy(into: image.buffer(index: 0)) == ([], 0))

        let partly = compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))],
                                        damage: [Rect(x: 15, y: -5, width: 10, height: 10)])
        XCTAssertEqual(partly, [Rect(x: 15, y: 0, width: 5, height: 5)], "damage is clipped to the screen")
    }

    func testScatteredDamageCollapsesToItsBoundingBox() throws {
        let size = Size(width: 400, height: 400)
        let compositor = try ShadowCompositor(size: size)
        let image = TestImage(width: 400, height: 400)
        _ = compositor.copy(into: image.buffer(index: 0))
        let dots = (0..<40).map { Rect(x: 10 + $0 * 9, y: 10 + $0 * 9, width: 3, height: 3) }
        compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))], damage: dots)
        let copied = compositor.copy(into: image.buffer(index: 0))
        XCTAssertGreaterThan(dots.count, ShadowCompositor.maxDamageClips)
        XCTAssertEqual(copied.rects, [Rect(x: 10, y: 10, width: 354, height: 354)])
        XCTAssertEqual(copied.bytes, 354 * 354 * 4)
        XCTAssertTrue(image.diff(snapshot: compositor.snapshot()).matches)
    }

    func testInvalidateBuffersMakesTheNextCopyWhole() throws {
        let size = Size(width: 32, height: 16)
        let compositor = try ShadowCompositor(size: size)
        let image = TestImage(width: 32, height: 16)
        _ = compositor.copy(into: image.buffer(index: 1))
        compositor.compose([CompositeItem(source: .color(.white), frame: Rect(size: size))],
                           damage: [Rect(x: 1, y: 1, width: 2, height: 2)])
        compositor.invalidateBuffers()
        let copied = compositor.copy(into: image.buffer(index: 1))
        XCTAssertEqual(copied.bytes, 32 * 16 * 4)
        XCTAssertEqual(copied.rects, [Rect(size: size)])
        XCTAssertEqual(compositor.copy(into: image.buffer(index: 1)).bytes, 0)
    }

    func testCopyWritesOnlyPixelsOfAPaddedStride() throws {
        let size = Size(width: 10, height: 4)
        let compositor = try ShadowCompositor(size: size, background: .white)
        let image = TestImage(width: 10, height: 4, stride: 64, fill: 0x5A)
        let copied = compositor.copy(into: image.buffer(index: 0))
        XCTAssertEqual(copied.bytes, 10 * 4 * 4)
        XCTAssertTrue(image.diff(snapshot: compositor.snapshot()).matches)
        image.withBytes { bytes in
            for y in 0..<4 { XCTAssertTrue(bytes[(y * 64 + 40)..<(y * 64 + 64)].allSatisfy { $0 == 0x5A }, "row \(y) padding") }
        }
    }

    func testHalfOpacityBlendsOverTheBackground() throws {
        let size = Size(width: 8, height: 8)
        let compositor = try ShadowCompositor(size: size, background: .white)
        compositor.compose([CompositeItem(source: .surface(solidSurface(size, argb: red)), frame: Rect(size: size),
                                          opacity: 0.5)], damage: [Rect(size: size)])
        assertRGB(rgb(compositor.snapshot(), width: 8, 4, 4), (255, 128, 128), tolerance: 1)
    }

    func testTranslucentPixelsArePremultiplied() throws {
        let size = Size(width: 8, height: 8)
        let compositor = try ShadowCompositor(size: size, background: .white)
        // Half-transparent red, premultiplied: alpha 0x80, red 0x80.
        let surface = solidSurface(size, argb: 0x8080_0000)
        compositor.compose([CompositeItem(source: .surface(surface), frame: Rect(size: size))], damage: [Rect(size: size)])
        assertRGB(rgb(compositor.snapshot(), width: 8, 2, 2), (255, 127, 127), tolerance: 1)

        compositor.compose([CompositeItem(source: .surface(surface), frame: Rect(size: size), opacity: 0.5)],
                           damage: [Rect(size: size)])
        // 0.25 of red over 0.75 of white.
        assertRGB(rgb(compositor.snapshot(), width: 8, 2, 2), (255, 191, 191), tolerance: 1)
    }

    /// An opacity group is composed as one image and blended at the group's opacity: where its items overlap, the
    /// lower one does not show through the upper one (as it does when each fades on its own). Frames taller than a
    /// band are composed band by band: the same pixels, and the fingerprint of the shadow buffer's pixels.
    func testAnOpacityGroupBlendsItsComposedImageBandByBand() throws {
        for height in [8, 3 * 64 + 5] {
            let size = Size(width: 8, height: height)
            let full = Rect(size: size)
            let group = OpacityGroup(id: ObjectIdentifier(self), opacity: 0.5)
            let compositor = try ShadowCompositor(size: size, background: .black)
            compositor.compose([
                CompositeItem(source: .surface(solidSurface(size, argb: 0xFFFF_FFFF)), frame: full),
                CompositeItem(source: .surface(solidSurface(size, argb: red)), frame: full, group: group),
                CompositeItem(source: .surface(solidSurface(size, argb: blue)), frame: Rect(x: 0, y: 0, width: 4, height: height),
                              group: group),
            ], damage: [full])
            let snapshot = compositor.snapshot()
            for y in [0, height / 2, height - 1] {
                // The group's image is blue on the left, red on the right, at half over white: no red under the blue.
                assertRGB(rgb(snapshot, width: 8, 1, y), (128, 128, 255), tolerance: 1)
                assertRGB(rgb(snapshot, width: 8, 6, y), (255, 128, 128), tolerance: 1)
            }
            var tiles = TileFingerprints(size: size, color: 0)
            snapshot.withUnsafeBytes { tiles.update(damage: [full], pixels: $0.baseAddress!, stride: size.width * 4) }
            XCTAssertEqual(compositor.fingerprint, tiles.fingerprint, "height \(height): the fingerprint of the composed pixels")

            // Each on its own at half: the red shows under the blue.
            compositor.compose([
                CompositeItem(source: .surface(solidSurface(size, argb: 0xFFFF_FFFF)), frame: full),
                CompositeItem(source: .surface(solidSurface(size, argb: red)), frame: full, opacity: 0.5),
                CompositeItem(source: .surface(solidSurface(size, argb: blue)), frame: Rect(x: 0, y: 0, width: 4, height: height),
                              opacity: 0.5),
            ], damage: [full])
            assertRGB(rgb(compositor.snapshot(), width: 8, 1, 0), (128, 64, 191), tolerance: 1)
        }
    }

    func testColorItemsBlendWithTheirAlphaAndOpacity() throws {
        let size = Size(width: 8, height: 8)
        let compositor = try ShadowCompositor(size: size, background: .black)
        compositor.compose([CompositeItem(source: .color(Color(rgb: 0x00FF00, alpha: 0.5)),
                                          frame: Rect(x: 0, y: 0, width: 4, height: 8), opacity: 0.5)],
                           damage: [Rect(size: size)])
        let snapshot = compositor.snapshot()
        assertRGB(rgb(snapshot, width: 8, 1, 1), (0, 64, 0), tolerance: 1)
        assertRGB(rgb(snapshot, width: 8, 5, 1), (0, 0, 0))
    }

    func testSurfaceScaledTwiceFillsItsFrame() throws {
        // Left half red, right half blue, 10x10, drawn into a 20x20 frame at (5, 5).
        let source = LayerSurface(size: Size(width: 10, height: 10), isOpaque: true)
        for y in 0..<10 {
            for x in 0..<10 {
                source.bytes.storeBytes(of: x < 5 ? red : blue, toByteOffset: y * source.stride + x * 4, as: UInt32.self)
            }
        }
        let compositor = try ShadowCompositor(size: Size(width: 32, height: 32), background: .white)
        compositor.compose([CompositeItem(source: .surface(source), frame: Rect(x: 5, y: 5, width: 20, height: 20))],
                           damage: [Rect(x: 0, y: 0, width: 32, height: 32)])
        let s = compositor.snapshot()
        assertRGB(rgb(s, width: 32, 5, 5), (255, 0, 0), tolerance: 2, "top-left corner keeps full colour")
        assertRGB(rgb(s, width: 32, 12, 20), (255, 0, 0), tolerance: 2)
        assertRGB(rgb(s, width: 32, 18, 20), (0, 0, 255), tolerance: 2)
        assertRGB(rgb(s, width: 32, 24, 24), (0, 0, 255), tolerance: 2, "bottom-right corner keeps full colour")
        assertRGB(rgb(s, width: 32, 4, 10), (255, 255, 255), tolerance: 0, "left of the frame")
        assertRGB(rgb(s, width: 32, 25, 24), (255, 255, 255), tolerance: 0, "right of the frame")
        assertRGB(rgb(s, width: 32, 10, 25), (255, 255, 255), tolerance: 0, "below the frame")
    }

    func testSurfaceScaledDownAveragesItsPixels() throws {
        // A one-pixel black and white checkerboard halves to mid grey, not to a pattern of one colour.
        let source = LayerSurface(size: Size(width: 16, height: 16), isOpaque: true)
        for y in 0..<16 {
            for x in 0..<16 {
                source.bytes.storeBytes(of: (x + y) % 2 == 0 ? 0xFF00_0000 : 0xFFFF_FFFF,
                                        toByteOffset: y * source.stride + x * 4, as: UInt32.self)
            }
        }
        let compositor = try ShadowCompositor(size: Size(width: 8, height: 8))
        compositor.compose([CompositeItem(source: .surface(source), frame: Rect(x: 0, y: 0, width: 8, height: 8))],
                           damage: [Rect(x: 0, y: 0, width: 8, height: 8)])
        let s = compositor.snapshot()
        for (x, y) in [(2, 2), (5, 3), (4, 6)] { assertRGB(rgb(s, width: 8, x, y), (128, 128, 128), tolerance: 3) }
    }

    func testClipCutsTheItem() throws {
        let size = Size(width: 20, height: 20)
        let compositor = try ShadowCompositor(size: size)
        compositor.compose([CompositeItem(source: .surface(solidSurface(size, argb: red)), frame: Rect(size: size),
                                          clip: Rect(x: 5, y: 5, width: 4, height: 3))],
                           damage: [Rect(size: size)])
        let s = compositor.snapshot()
        var redPixels = 0
        for y in 0..<20 { for x in 0..<20 where rgb(s, width: 20, x, y) == (255, 0, 0) { redPixels += 1 } }
        XCTAssertEqual(redPixels, 12)
        XCTAssertTrue(rgb(s, width: 20, 5, 5) == (255, 0, 0))
        XCTAssertTrue(rgb(s, width: 20, 9, 5) == (0, 0, 0))
    }

    func testOnlyOpaqueFullyCoveringItemsHideWhatIsBelow() throws {
        let size = Size(width: 16, height: 16)
        let compositor = try ShadowCompositor(size: size)
        let below = CompositeItem(source: .color(.white), frame: Rect(size: size))
        // Opaque pixels, but half opacity: the white must show through.
        compositor.compose([below, CompositeItem(source: .surface(solidSurface(size, argb: red)),
                                                 frame: Rect(size: size), opacity: 0.5)],
                           damage: [Rect(size: size)])
        assertRGB(rgb(compositor.snapshot(), width: 16, 8, 8), (255, 128, 128), tolerance: 1)
        // Not marked opaque: blended, so the translucent pixels show the white.
        compositor.compose([below, CompositeItem(source: .surface(solidSurface(size, argb: 0x8080_0000, isOpaque: false)),
                                                 frame: Rect(size: size))],
                           damage: [Rect(size: size)])
        assertRGB(rgb(compositor.snapshot(), width: 16, 8, 8), (255, 127, 127), tolerance: 1)
        // Opaque and covering: what is below no longer matters.
        compositor.compose([below, CompositeItem(source: .surface(solidSurface(size, argb: blue)), frame: Rect(size: size))],
                           damage: [Rect(size: size)])
        assertRGB(rgb(compositor.snapshot(), width: 16, 8, 8), (0, 0, 255))
    }

    func testLayerSurfaceIsReleasedAfterCompose() throws {
        let compositor = try ShadowCompositor(size: Size(width: 8, height: 8))
        // The general path; a direct frame holds its surfaces until the shadow catches up (DirectFrameTests).
        compositor.directFramesEnabled = false
        weak var weakSurface: LayerSurface?
        do {
            let surface = solidSurface(Size(width: 8, height: 8), argb: red)
            weakSurface = surface
            compositor.compose([CompositeItem(source: .surface(surface), frame: Rect(x: 0, y: 0, width: 8, height: 8))],
                               damage: [Rect(x: 0, y: 0, width: 8, height: 8)])
        }
        XCTAssertNil(weakSurface, "the compositor keeps no reference to a layer's pixels after compose")
        assertRGB(rgb(compositor.snapshot(), width: 8, 3, 3), (255, 0, 0))
    }

    /// The exact number of screen pixels in the union of `rects`.
    private func pixelCount(of rects: [Rect], in size: Size) -> Int {
        var covered = [Bool](repeating: false, count: size.width * size.height)
        for rect in rects {
            let r = rect.intersection(Rect(size: size))
            guard !r.isEmpty else { continue }
            for y in r.y..<r.maxY { for x in r.x..<r.maxX { covered[y * size.width + x] = true } }
        }
        return covered.filter { $0 }.count
    }
}
