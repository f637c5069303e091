import KioskCore
import KioskRender
import XCTest

/// Whole-panel frames of opaque surfaces at whole-pixel positions (a slide's two flattened pages) go straight into
/// the scanout buffer. They must put exactly the bytes there, and leave exactly the shadow buffer, that the general
/// path (composition into the shadow buffer, then a copy) does: compared byte for byte with a second compositor
/// whose direct frames are off, fed the same frames, at many offsets, on a panel of odd width and height, into
/// buffers with padded rows that alternate as in double buffering. So must a fade's frames, composed band by band
/// straight into the scanout buffer.
final class DirectFrameTests: XCTestCase {
    private static let size = Size(width: 101, height: 37)
    private static let background = Color(rgb: 0x203040)

    /// An opaque surface whose every pixel differs from its neighbours, so a copy off by one pixel shows.
    private static func page(seed: UInt32, size: Size = size) -> LayerSurface {
        let surface = LayerSurface(size: size, isOpaque: true)
        let words = surface.bytes.bindMemory(to: UInt32.self, capacity: surface.stride / 4 * size.height)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let v = UInt32(x) &* 2_654_435_761 ^ UInt32(y) &* 40_503 ^ seed &* 97
                words[y * surface.stride / 4 + x] = 0xFF00_0000 | (v & 0x00FF_FFFF)
            }
        }
        return surface
    }

    /// Two compositors (direct frames on and off) and two scanout buffers each, with padded rows.
    private final class Pair {
        let size: Size
        let direct: ShadowCompositor
        let general: ShadowCompositor
        let directBuffers: [TestImage]
        let generalBuffers: [TestImage]
        private var frame = 0

        init(size: Size = DirectFrameTests.size) throws {
            self.size = size
            func buffers() -> [TestImage] {
                [0x11, 0x22].map { TestImage(width: size.width, height: size.height, stride: size.width * 4 + 12, fill: $0) }
            }
            directBuffers = buffers()
            generalBuffers = buffers()
            direct = try ShadowCompositor(size: size, background: DirectFrameTests.background)
            general = try ShadowCompositor(size: size, background: DirectFrameTests.background)
            general.directFramesEnabled = false
        }

        /// Composes `items` over `damage` in both, copies into the next back buffer of each, and compares the
        /// buffers (every byte, padding included), what each copy reports, and the shadow buffers.
        func step(_ items: [CompositeItem], damage: [Rect], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(direct.compose(items, damage: damage), general.compose(items, damage: damage), "\(what): composed damage",
                           file: file, line: line)
            let index = frame % 2
            frame += 1
            let a = direct.copy(into: directBuffers[index].buffer(index: index))
            let b = general.copy(into: generalBuffers[index].buffer(index: index))
            XCTAssertEqual(a.bytes, b.bytes, "\(what): bytes copied", file: file, line: line)
            XCTAssertEqual(Set(a.rects), Set(b.rects), "\(what): rectangles copied", file: file, line: line)
            XCTAssertTrue(directBuffers[index].array == generalBuffers[index].array,
                          "\(what): scanout buffer \(index) differs from the general path's: \(directBuffers[index].diff(generalBuffers[index]))",
                          file: file, line: line)
            XCTAssertTrue(direct.snapshot() == general.snapshot(), "\(what): shadow buffers differ", file: file, line: line)
            // Fingerprints: a direct frame is hashed from its layer surfaces, and must hash as the general path's
            // frame; the general path's, kept up to date tile by tile, as the whole frame hashed afresh.
            XCTAssertEqual(direct.fingerprint, general.fingerprint, "\(what): fingerprints", file: file, line: line)
            var fresh = TileFingerprints(size: size, color: 0)
            general.snapshot().withUnsafeBytes {
                fresh.update(damage: [Rect(size: size)], pixels: $0.baseAddress!, stride: size.width * 4)
            }
            XCTAssertEqual(general.fingerprint, fresh.fingerprint, "\(what): fingerprint kept by tiles", file: file, line: line)
        }
    }

    private let first = page(seed: 1)
    private let second = page(seed: 2)

    /// The root's fill under two full-screen pages, as a slide flattens them.
    private func slide(outgoing: Int, incoming: Int, vertical: Bool = false) -> [CompositeItem] {
        func at(_ offset: Int) -> Rect {
            vertical ? Rect(x: 0, y: offset, width: Self.size.width, height: Self.size.height)
                : Rect(x: offset, y: 0, width: Self.size.width, height: Self.size.height)
        }
        return [CompositeItem(source: .color(.black), frame: Rect(size: Self.size)),
                CompositeItem(source: .surface(first), frame: at(outgoing)),
                CompositeItem(source: .surface(second), frame: at(incoming))]
    }

    func testSlideFramesPutTheSameBytesAsTheGeneralPathAtEveryOffset() throws {
        let pair = try Pair()
        let full = [Rect(size: Self.size)]
        let w = Self.size.width, h = Self.size.height
        var frames = 0
        for offset in [w, w - 1, 99, 64, 50, 17, 2, 1, 0] {
            pair.step(slide(outgoing: offset - w, incoming: offset), damage: full, "slide left, incoming at \(offset)")
            pair.step(slide(outgoing: w - offset, incoming: -offset), damage: full, "slide right, incoming at \(-offset)")
            frames += 2
        }
        for offset in [h, 36, 19, 1, 0] {
            pair.step(slide(outgoing: offset - h, incoming: offset, vertical: true), damage: full, "slide up, incoming at \(offset)")
            frames += 1
        }
        XCTAssertEqual(pair.direct.directFrames, frames, "every slide frame went the direct way")
        XCTAssertEqual(pair.general.directFrames, 0)
    }

    func testFramesThatAreNotOpaqueCopiesTakeTheGeneralPathWithTheSamePixels() throws {
        let pair = try Pair()
        let full = [Rect(size: Self.size)]
        let w = Self.size.width
        pair.step(slide(outgoing: 40 - w, incoming: 40), damage: full, "direct")
        XCTAssertEqual(pair.direct.directFrames, 1)

        // A gap between the pages: the root's fill shows in it.
        pair.step(slide(outgoing: 30 - w - 3, incoming: 30), damage: full, "gap")
        // The incoming page translucent, as in a fade.
        var fading = slide(outgoing: 0, incoming: 0)
        fading[2].opacity = 0.4
        pair.step(fading, damage: full, "translucent")
        // A surface scaled to its frame, and one that is not opaque.
        pair.step([CompositeItem(source: .surface(first), frame: Rect(x: 0, y: 0, width: w + 1, height: Self.size.height))],
                  damage: full, "scaled")
        pair.step([CompositeItem(source: .color(.black), frame: Rect(size: Self.size)),
                   CompositeItem(source: .surface(solidSurface(Self.size, argb: 0x8040_2010)), frame: Rect(size: Self.size))],
                  damage: full, "not opaque")
        XCTAssertEqual(pair.direct.directFrames, 1, "only the first frame went the direct way")
    }

    /// A fade's frames (the incoming page an opacity group over the outgoing one) are composed band by band and
    /// written straight into the scanout buffer: the same bytes as the general path, on a panel of one band and on
    /// one of three and a part; then a partial composition over one, a buffer that missed it, and a snapshot.
    func testFadeFramesOfAnOpacityGroupPutTheSameBytesAsTheGeneralPath() throws {
        for size in [Self.size, Size(width: 75, height: 3 * 64 + 11)] {
            let pair = try Pair(size: size)
            let full = [Rect(size: size)]
            let outgoing = Self.page(seed: 4, size: size), incoming = Self.page(seed: 5, size: size)
            let badge = Rect(x: 9, y: 4, width: 30, height: 20)
            let outgoingPage = [CompositeItem(source: .color(.black), frame: Rect(size: size)),
                                CompositeItem(source: .surface(outgoing), frame: Rect(size: size)),
                                CompositeItem(source: .color(Color(red: 0, green: 0, blue: 1, alpha: 0.3)), frame: badge)]
            func fade(_ t: Double) -> [CompositeItem] {
                let group = OpacityGroup(id: ObjectIdentifier(incoming), opacity: t)
                return outgoingPage
                    + [CompositeItem(source: .surface(incoming), frame: Rect(size: size), group: group),
                       CompositeItem(source: .color(Color(red: 1, green: 1, blue: 1, alpha: 0.5)), frame: badge, group: group)]
            }
            // The first fade frame finds only the background in the shadow buffer, so it composes the outgoing page;
            // once the outgoing page is composed there, the fade takes it from there.
            pair.step(fade(0.3), damage: full, "\(size): fade at 0.3")
            XCTAssertEqual(pair.direct.crossFadesOverShadow, 0, "\(size): the shadow buffer holds the background alone")
            for t in [0.002, 0.01, 0.25, 0.5, 0.99, 0.998] {
                // Each step's snapshot brings the shadow buffer up to the fade frame: the outgoing page again first.
                pair.step(outgoingPage, damage: full, "\(size): the outgoing page")
                pair.step(fade(t), damage: full, "\(size): fade at \(t)")
            }
            XCTAssertEqual(pair.direct.directFrames, 7, "\(size): every fade frame went the direct way")
            XCTAssertEqual(pair.direct.crossFadesOverShadow, 6, "\(size): over the outgoing page in the shadow buffer")
            pair.step(fade(0.998), damage: [], "\(size): nothing new: the other buffer gets the same frame")
            var items = fade(0.6)
            pair.step(fade(0.6), damage: full, "\(size): fade at 0.6")
            items.append(CompositeItem(source: .color(Color(rgb: 0x00FF00)), frame: Rect(x: 3, y: 30, width: 8, height: 6)))
            pair.step(items, damage: [Rect(x: 3, y: 30, width: 8, height: 6)], "\(size): a mark over the banded frame")
            // The shadow buffer caught up with the fade, so the next fade frame composes the outgoing page again.
            pair.step(fade(0.7), damage: full, "\(size): fade at 0.7 after the mark")
            XCTAssertEqual(pair.direct.directFrames, 9)
            XCTAssertEqual(pair.direct.crossFadesOverShadow, 6)
            XCTAssertEqual(pair.general.directFrames, 0)
        }
    }

    /// After direct frames, a composition of part of the panel draws over the shadow buffer, which must first
    /// catch up with the direct frame; each buffer then receives what it missed.
    func testPartialDamageAfterDirectFramesComposesOverTheFrameOnScreen() throws {
        let pair = try Pair()
        let full = [Rect(size: Self.size)]
        let w = Self.size.width
        pair.step(slide(outgoing: 70 - w, incoming: 70), damage: full, "direct 1")
        pair.step(slide(outgoing: 33 - w, incoming: 33), damage: full, "direct 2")
        var items = slide(outgoing: 33 - w, incoming: 33)
        items.append(CompositeItem(source: .color(Color(red: 1, green: 1, blue: 1, alpha: 0.5)), frame: Rect(x: 20, y: 5, width: 30, height: 9)))
        pair.step(items, damage: [Rect(x: 20, y: 5, width: 30, height: 9)], "a badge over the direct frame")
        pair.step(items, damage: [], "nothing new: the other buffer catches up")
        pair.step(slide(outgoing: 10 - w, incoming: 10), damage: full, "direct 3")
        pair.step(slide(outgoing: 10 - w, incoming: 10), damage: [], "nothing new after a direct frame")
        XCTAssertEqual(pair.direct.directFrames, 3)
    }

    /// A direct frame holds its surfaces until the shadow buffer catches up with it (at a snapshot or at the next
    /// composition), and lets them go then.
    func testADirectFrameReleasesItsSurfacesOnceTheShadowCatchesUp() throws {
        let compositor = try ShadowCompositor(size: Self.size)
        weak var weakSurface: LayerSurface?
        do {
            let surface = Self.page(seed: 3)
            weakSurface = surface
            compositor.compose([CompositeItem(source: .surface(surface), frame: Rect(size: Self.size))], damage: [Rect(size: Self.size)])
        }
        XCTAssertEqual(compositor.directFrames, 1)
        XCTAssertNotNil(weakSurface, "the direct frame is not in the shadow buffer yet")
        let shown = compositor.snapshot()
        XCTAssertNil(weakSurface, "caught up, the compositor keeps no reference to the surface")
        let expected = Self.page(seed: 3)
        XCTAssertTrue(rgb(shown, width: Self.size.width, 7, 5) == rgbOf(expected.pixel(x: 7, y: 5)), "the snapshot shows the surface")
    }

    private func rgbOf(_ argb: UInt32) -> (r: UInt8, g: UInt8, b: UInt8) {
        (UInt8(truncatingIfNeeded: argb >> 16), UInt8(truncatingIfNeeded: argb >> 8), UInt8(truncatingIfNeeded: argb))
    }
}
