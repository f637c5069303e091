import KioskCore
import XCTest

/// `TileFingerprints`: a hash per 64x64 tile, rehashed only where damage says, and the frame's fingerprint over
/// them. Pixel buffers here are XRGB8888 arrays with a stride of width * 4.
final class TileFingerprintsTests: XCTestCase {
    private let size = Size(width: 200, height: 130)   // 4 x 3 tiles, the last column and row partial

    private func frame(_ color: UInt32) -> [UInt32] { Array(repeating: color, count: size.width * size.height) }

    private func update(_ tiles: inout TileFingerprints, _ pixels: [UInt32], damage: [Rect]) {
        pixels.withUnsafeBytes { tiles.update(damage: damage, pixels: $0.baseAddress!, stride: size.width * 4) }
    }

    /// A frame with a gradient, so that every tile differs from every other.
    private func gradient() -> [UInt32] {
        (0..<(size.width * size.height)).map { i in UInt32(i % size.width) << 16 | UInt32(i / size.width) << 8 | UInt32(i % 7) }
    }

    func testGridCoversThePanelInTilesOf64() {
        let tiles = TileFingerprints(size: size, color: 0)
        XCTAssertEqual(tiles.columns, 4)
        XCTAssertEqual(tiles.rows, 3)
        XCTAssertEqual(tiles.tileHashes.count, 12)
        XCTAssertEqual(tiles.tiles(touching: [Rect(x: 63, y: 63, width: 2, height: 2)]), [0, 1, 4, 5])
        XCTAssertEqual(tiles.tiles(touching: [Rect(x: 195, y: 129, width: 50, height: 50)]), [11], "cut to the panel")
        XCTAssertEqual(tiles.tiles(touching: [Rect(x: 190, y: 120, width: 50, height: 50)]), [6, 7, 10, 11])
        XCTAssertEqual(tiles.tiles(touching: [Rect(x: 300, y: 0, width: 10, height: 10)]), [], "outside the panel")
    }

    func testIdenticalImagesGiveIdenticalFingerprintsWhateverTheirHistory() {
        let image = gradient()
        var once = TileFingerprints(size: size, color: 0)
        update(&once, image, damage: [Rect(size: size)])
        // Another history: painted red first, then the image arriving in three damaged pieces.
        var pieces = TileFingerprints(size: size, color: 0)
        update(&pieces, frame(0xFF0000), damage: [Rect(size: size)])
        update(&pieces, image, damage: [Rect(x: 0, y: 0, width: 200, height: 40)])
        update(&pieces, image, damage: [Rect(x: 0, y: 40, width: 70, height: 90), Rect(x: 70, y: 40, width: 130, height: 90)])
        XCTAssertEqual(once.fingerprint, pieces.fingerprint)
        XCTAssertEqual(once.tileHashes, pieces.tileHashes)
        XCTAssertNil(once.fingerprint.uniformColor)

        // The initial fill hashes as a frame of that colour hashed pixel by pixel, and the X byte does not count.
        var read = TileFingerprints(size: size, color: 0x123456)
        XCTAssertEqual(read.fingerprint.uniformColor, 0x123456)
        let filled = read.fingerprint
        update(&read, frame(0xFF12_3456), damage: [Rect(size: size)])
        XCTAssertEqual(read.fingerprint, filled)
    }

    func testAnUnchangedFrameDoesNotRehash() {
        var tiles = TileFingerprints(size: size, color: 0)
        update(&tiles, gradient(), damage: [Rect(size: size)])
        let hashed = tiles.tilesHashed, before = tiles.fingerprint
        XCTAssertEqual(hashed, 12)
        update(&tiles, gradient(), damage: [])
        update(&tiles, gradient(), damage: [Rect(x: 10, y: 10, width: 0, height: 5)])
        XCTAssertEqual(tiles.tilesHashed, hashed, "no damage, no tile hashed")
        XCTAssertEqual(tiles.fingerprint, before)
    }

    func testADamagedTileChangesOnlyItsOwnHash() {
        var image = gradient()
        var tiles = TileFingerprints(size: size, color: 0)
        update(&tiles, image, damage: [Rect(size: size)])
        let before = tiles.tileHashes, fingerprint = tiles.fingerprint, hashed = tiles.tilesHashed
        // One pixel in tile (1, 1), index 5.
        image[70 * size.width + 100] ^= 0x000100
        update(&tiles, image, damage: [Rect(x: 100, y: 70, width: 1, height: 1)])
        XCTAssertEqual(tiles.tilesHashed, hashed + 1)
        for index in before.indices {
            if index == 5 {
                XCTAssertNotEqual(tiles.tileHashes[index], before[index], "the damaged tile")
            } else {
                XCTAssertEqual(tiles.tileHashes[index], before[index], "tile \(index)")
            }
        }
        XCTAssertNotEqual(tiles.fingerprint, fingerprint)
        // Putting the pixel back brings the fingerprint back.
        image[70 * size.width + 100] ^= 0x000100
        update(&tiles, image, damage: [Rect(x: 100, y: 70, width: 1, height: 1)])
        XCTAssertEqual(tiles.fingerprint, fingerprint)
    }

    func testSwappedTilesAndMovedPixelsHashDifferently() {
        var a = TileFingerprints(size: size, color: 0), b = TileFingerprints(size: size, color: 0)
        var left = frame(0), right = frame(0)
        left[5] = 0xFFFFFF
        right[6] = 0xFFFFFF
        update(&a, left, damage: [Rect(size: size)])
        update(&b, right, damage: [Rect(size: size)])
        XCTAssertNotEqual(a.fingerprint, b.fingerprint, "a pixel moved by one column")
        left[5] = 0; left[64 * size.width] = 0xFFFFFF   // first pixel of tile 4
        right[6] = 0; right[64] = 0xFFFFFF              // first pixel of tile 1
        update(&a, left, damage: [Rect(size: size)])
        update(&b, right, damage: [Rect(size: size)])
        XCTAssertEqual(a.tileHashes[4], b.tileHashes[1])
        XCTAssertNotEqual(a.fingerprint, b.fingerprint, "the same tile in another place")
    }

    func testRowsFedInPiecesHashAsRowsReadAtOnce() {
        let image = gradient()
        var whole = TileFingerprints(size: size, color: 0)
        update(&whole, image, damage: [Rect(size: size)])
        var pieces = TileFingerprints(size: size, color: 0)
        image.withUnsafeBytes { bytes in
            pieces.update(damage: [Rect(size: size)]) { y, x, width, hasher in
                // Pieces of 1, 3, 5, ... pixels: every odd boundary the carried pixel must bridge.
                var cursor = x, piece = 1
                while cursor < x + width {
                    let count = min(piece, x + width - cursor)
                    hasher.feed(bytes.baseAddress!.advanced(by: (y * size.width + cursor) * 4), count: count)
                    cursor += count
                    piece += 2
                }
            }
        }
        XCTAssertEqual(pieces.fingerprint, whole.fingerprint)
    }

    func testOneColourFramesAreSeenFromTheTiles() {
        var tiles = TileFingerprints(size: size, color: 0x00FF00)
        XCTAssertEqual(tiles.fingerprint.uniformColor, 0x00FF00)
        var image = frame(0)
        update(&tiles, image, damage: [Rect(size: size)])
        XCTAssertEqual(tiles.fingerprint.uniformColor, 0)
        image[129 * size.width + 199] = 0x010101   // the last pixel
        update(&tiles, image, damage: [Rect(x: 199, y: 129, width: 1, height: 1)])
        XCTAssertNil(tiles.fingerprint.uniformColor)
        // Tiles each uniform but of different colours are not one colour.
        var halves = frame(0)
        for y in 0..<size.height { for x in 64..<size.width { halves[y * size.width + x] = 0x202020 } }
        update(&tiles, halves, damage: [Rect(size: size)])
        XCTAssertNil(tiles.fingerprint.uniformColor)
        XCTAssertEqual(tiles.fingerprint.hex.count, 16)
    }
}
