/// What a composed frame looks like, in 64 bits: the fingerprint of the whole frame, and the one colour it is when
/// every pixel is the same (a black screen, a blank one). A plain value; `flip` events, `stats` and the health signal
/// carry it.
public struct FrameFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// A hash over the tile hashes (see `TileFingerprints`). Equal images give equal values; a changed pixel changes
    /// it (barring a 64-bit collision).
    public let hash: UInt64
    /// XRGB8888 without the X byte (0x00RRGGBB) when the frame is one colour, else nil.
    public let uniformColor: UInt32?

    public init(hash: UInt64, uniformColor: UInt32?) {
        self.hash = hash
        self.uniformColor = uniformColor
    }

    /// 16 hex digits, as proof of play writes its frame hashes.
    public var hex: String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    public var description: String { hex }
}

/// A 64-bit hash per 64×64-pixel tile of the shadow buffer (panel coordinates), kept up to date by hashing only the
/// tiles a composition touched, so an unchanged frame costs nothing and a seconds clock costs the few tiles under
/// it. Owned by a compositor, updated right after it composed (the pixels are still in cache); main thread.
///
/// Why 64×64 tiles rather than a fixed grid: the cost of hashing is the damage rounded out to tile edges, so a tile
/// must be small next to a widget's damage whatever the panel's size (a fixed 16×9 grid makes 240×240 tiles on a
/// 4K panel, 4 times the pixels of a clock's digits); and 64 px is large enough that the tile table stays small (510
/// tiles at 1920×1080, 4 KB of hashes) and the frame fingerprint over it costs well under a microsecond.
///
/// The hash: FNV-1a over 8-byte words (two pixels, the X byte masked off, since scanout ignores it and Cairo leaves
/// it unspecified), then a final avalanche (xxHash's) per tile; the frame's fingerprint is the same over the tile
/// hashes in row-major order. One multiply per two pixels. Each step is a bijection of the running hash, so a tile
/// that differs in one word hashes differently. Not cryptographic.
///
/// While hashing, each tile also records whether it is one colour (which colour): the frame is one colour when every
/// tile is, with the same colour. So black detection reads 510 values, never the frame.
public struct TileFingerprints: Sendable {
    public static let tileSize = 64
    public let size: Size
    public let columns: Int
    public let rows: Int
    /// Per tile, row-major.
    public private(set) var tileHashes: [UInt64]
    /// Per tile: its colour (0x00RRGGBB) when uniform, else `mixed`.
    private var tileColors: [UInt32]
    private static let mixed: UInt32 = 0xFFFF_FFFF
    /// Tiles hashed since creation (a count for tests and telemetry: an unchanged frame adds none).
    public private(set) var tilesHashed = 0
    public private(set) var fingerprint: FrameFingerprint

    static let offset: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// Tiles for a panel of `size` holding one colour (`color`, 0x00RRGGBB, what a fresh shadow buffer is filled
    /// with): hashed as that frame would hash, without reading it.
    public init(size: Size, color: UInt32) {
        self.size = size
        columns = max(1, (size.width + Self.tileSize - 1) / Self.tileSize)
        rows = max(1, (size.height + Self.tileSize - 1) / Self.tileSize)
        tileHashes = []
        tileColors = Array(repeating: color & 0x00FF_FFFF, count: columns * rows)
        fingerprint = FrameFingerprint(hash: 0, uniformColor: nil)
        let row = [UInt32](repeating: color & 0x00FF_FFFF, count: Self.tileSize)
        let (columns, size) = (columns, size)
        tileHashes = row.withUnsafeBytes { row in
            (0..<(columns * rows)).map { index in
                let tile = Self.tileRect(index % columns, index / columns, size: size)
                var hasher = TileHasher()
                for _ in 0..<tile.height {
                    hasher.feed(row.baseAddress!, count: tile.width)
                    hasher.endRow()
                }
                return hasher.finish().hash
            }
        }
        recomputeFrame()
    }

    static func tileRect(_ column: Int, _ row: Int, size: Size) -> Rect {
        let x = column * tileSize, y = row * tileSize
        return Rect(x: x, y: y, width: min(tileSize, size.width - x), height: min(tileSize, size.height - y))
    }

    /// The tile indices `rects` (panel coordinates) touch, each once, in row-major order.
    public func tiles(touching rects: [Rect]) -> [Int] {
        var marked = [Bool](repeating: false, count: columns * rows)
        let panel = Rect(size: size)
        for rect in rects {
            let r = rect.intersection(panel)
            guard !r.isEmpty else { continue }
            for row in (r.y / Self.tileSize)...((r.y + r.height - 1) / Self.tileSize) {
                for column in (r.x / Self.tileSize)...((r.x + r.width - 1) / Self.tileSize) {
                    marked[row * columns + column] = true
                }
            }
        }
        return marked.indices.filter { marked[$0] }
    }

    /// Rehashes the tiles `damage` (panel rectangles) touches from XRGB8888 `pixels` of the panel's size, rows
    /// `stride` bytes apart, then the frame's fingerprint. Empty damage does nothing.
    public mutating func update(damage: [Rect], pixels: UnsafeRawPointer, stride: Int) {
        update(damage: damage) { y, x, width, hasher in
            hasher.feed(pixels.advanced(by: y * stride + x * 4), count: width)
        }
    }

    /// As `update(damage:pixels:stride:)`, for a frame that is not in one buffer: `row(y, x, width, &hasher)` feeds
    /// the `width` pixels of row `y` from column `x`, left to right, in as many pieces as it likes.
    public mutating func update(damage: [Rect], row: (_ y: Int, _ x: Int, _ width: Int, _ hasher: inout TileHasher) -> Void) {
        let touched = tiles(touching: damage)
        guard !touched.isEmpty else { return }
        for index in touched {
            let tile = Self.tileRect(index % columns, index / columns, size: size)
            var hasher = TileHasher()
            for y in tile.y..<(tile.y + tile.height) {
                row(y, tile.x, tile.width, &hasher)
                hasher.endRow()
            }
            let result = hasher.finish()
            tileHashes[index] = result.hash
            tileColors[index] = result.uniformColor ?? Self.mixed
        }
        tilesHashed += touched.count
        recomputeFrame()
    }

    private mutating func recomputeFrame() {
        var hash = Self.offset
        for tile in tileHashes { hash = (hash ^ tile) &* Self.prime }
        let first = tileColors[0]
        let uniform = first != Self.mixed && !tileColors.contains { $0 != first }
        fingerprint = FrameFingerprint(hash: TileHasher.avalanche(hash), uniformColor: uniform ? first : nil)
    }
}

/// The running hash of one tile: FNV-1a over pairs of pixels (8-byte words, X bytes masked off), fed row by row in
/// pieces of any length, and whether every pixel so far had the first one's colour. A plain value.
public struct TileHasher {
    private var hash = TileFingerprints.offset
    /// A pixel waiting for its pair (the X byte masked off), when a piece ended on an odd count.
    private var carry: UInt32?
    private var first: UInt32?
    private var uniform = true

    public init() {}

    /// Feeds `count` XRGB8888 pixels at `pixels`.
    public mutating func feed(_ pixels: UnsafeRawPointer, count: Int) {
        guard count > 0 else { return }
        var p = pixels, n = count
        if first == nil { first = p.loadUnaligned(as: UInt32.self) & 0x00FF_FFFF }
        let one = UInt64(first!), pair = one | one << 32
        if let pending = carry {
            let pixel = p.loadUnaligned(as: UInt32.self) & 0x00FF_FFFF
            let word = UInt64(pending) | UInt64(pixel) << 32
            hash = (hash ^ word) &* TileFingerprints.prime
            if word != pair { uniform = false }
            carry = nil
            p += 4; n -= 1
        }
        var h = hash, same = uniform
        while n >= 2 {
            let word = p.loadUnaligned(as: UInt64.self) & 0x00FF_FFFF_00FF_FFFF
            h = (h ^ word) &* TileFingerprints.prime
            same = same && word == pair
            p += 8; n -= 2
        }
        hash = h; uniform = same
        if n == 1 { carry = p.loadUnaligned(as: UInt32.self) & 0x00FF_FFFF }
    }

    /// Ends a row: a pixel left over is hashed alone, so rows of odd width hash the same whatever the pieces.
    public mutating func endRow() {
        guard let pending = carry else { return }
        let word = UInt64(pending) | 0xFF00_0000_0000_0000
        hash = (hash ^ word) &* TileFingerprints.prime
        if pending != first { uniform = false }
        carry = nil
    }

    func finish() -> (hash: UInt64, uniformColor: UInt32?) {
        (Self.avalanche(hash), uniform ? first : nil)
    }

    /// xxHash64's final mix: every input bit reaches every output bit.
    static func avalanche(_ value: UInt64) -> UInt64 {
        var h = value
        h ^= h >> 33
        h &*= 0xC2B2_AE3D_27D4_EB4F
        h ^= h >> 29
        h &*= 0x1656_67B1_9E37_79F9
        h ^= h >> 32
        return h
    }
}
