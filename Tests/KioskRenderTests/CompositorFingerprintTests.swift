import KioskCore
import KioskRender
import XCTest

/// The shadow compositor's frame fingerprints (`TileFingerprints`): kept up to date from the damage alone, they
/// equal the composed frame hashed afresh, on upright and turned panels; an unchanged frame hashes nothing, and a
/// small change rehashes only the tiles under it.
final class CompositorFingerprintTests: XCTestCase {
    private func fresh(_ compositor: ShadowCompositor) -> FrameFingerprint {
        var tiles = TileFingerprints(size: compositor.size, color: 0)
        compositor.snapshot().withUnsafeBytes {
            tiles.update(damage: [Rect(size: compositor.size)], pixels: $0.baseAddress!, stride: compositor.size.width * 4)
        }
        return tiles.fingerprint
    }

    func testFingerprintsFollowPartialCompositionsOnEveryRotation() throws {
        for rotation in [OutputRotation.degrees0, .degrees90, .degrees180, .degrees270] {
            let compositor = try ShadowCompositor(size: Size(width: 150, height: 90), background: Color(rgb: 0x102030), rotation: rotation)
            XCTAssertEqual(compositor.fingerprint, fresh(compositor), "\(rotation): the background fill")
            XCTAssertEqual(compositor.fingerprint?.uniformColor, 0x102030)
            let scene = Rect(size: compositor.sceneSize)
            let steps: [(Color, Rect)] = [(Color(rgb: 0xFF0000), Rect(x: 3, y: 5, width: 40, height: 20)),
                                          (Color(rgb: 0x00FF00), Rect(x: 60, y: 10, width: 70, height: 33)),
                                          (Color(red: 0, green: 0, blue: 1, alpha: 0.5), Rect(x: 20, y: 15, width: 50, height: 50))]
            var items: [CompositeItem] = []
            for (color, frame) in steps {
                items.append(CompositeItem(source: .color(color), frame: frame))
                compositor.compose(items, damage: [frame])
                XCTAssertEqual(compositor.fingerprint, fresh(compositor), "\(rotation): after \(frame)")
                XCTAssertNil(compositor.fingerprint?.uniformColor)
            }
            compositor.compose([CompositeItem(source: .color(Color(rgb: 0x000000)), frame: scene)], damage: [scene])
            XCTAssertEqual(compositor.fingerprint?.uniformColor, 0, "\(rotation): all black")
        }
    }

    func testAnUnchangedFrameHashesNothingAndAClockRehashesItsTiles() throws {
        let compositor = try ShadowCompositor(size: Size(width: 640, height: 360))
        let full = Rect(size: compositor.size)
        compositor.compose([CompositeItem(source: .color(Color(rgb: 0x336699)), frame: full)], damage: [full])
        let hashed = compositor.tilesHashed
        XCTAssertEqual(hashed, 10 * 6, "a whole frame: every tile")
        compositor.compose([], damage: [])
        XCTAssertEqual(compositor.tilesHashed, hashed, "no damage, no hashing")
        // A clock's digits, 100x40 at (70, 50): the tiles (1, 0), (2, 0), (1, 1), (2, 1).
        let digits = Rect(x: 70, y: 50, width: 100, height: 40)
        let before = compositor.tiles.tileHashes
        compositor.compose([CompositeItem(source: .color(Color(rgb: 0x336699)), frame: full),
                            CompositeItem(source: .color(Color(rgb: 0xFFFFFF)), frame: digits)], damage: [digits])
        XCTAssertEqual(compositor.tilesHashed, hashed + 4)
        let changed = before.indices.filter { before[$0] != compositor.tiles.tileHashes[$0] }
        XCTAssertEqual(changed, [1, 2, 11, 12])
    }
}
