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
/// The hash: Fletcher's two sums over 8-byte words (two pixels, the X byte masked off, since scanout ignores it and
/// Cairo leaves it unspecified) in four SIMD lanes (`TileHasher`: additions only, as fast as the memory is read),
/// mixed per tile into 64 bits with FNV-1a and xxHash's avalanche; the frame's fingerprint is FNV-1a over the tile
/// hashes in row-major order, avalanched. A tile that differs in one word hashes differently. Not cryptographic.
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
                for _ in 0..<tile.height { hasher.hashRow(row.baseAddress!, count: tile.width) }
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
    /// `stride` bytes apart, then the frame's fingerprint. Empty damage does nothing. With `firstRow`, `pixels`
    /// holds the panel's rows from that one on (a band), and `damage` touches no tile above it.
    public mutating func update(damage: [Rect], pixels: UnsafeRawPointer, stride: Int, firstRow: Int = 0) {
        let touched = tiles(touching: damage)
        guard !touched.isEmpty else { return }
        for index in touched {
            let tile = Self.tileRect(index % columns, index / columns, size: size)
            precondition(tile.y >= firstRow, "tile row \(tile.y) is above the band's first row \(firstRow)")
            var hasher = TileHasher()
            var row = pixels.advanced(by: (tile.y - firstRow) * stride + tile.x * 4)
            for _ in 0..<tile.height {
                hasher.hashRow(row, count: tile.width)
                row += stride
            }
            store(hasher.finish(), at: index)
        }
        tilesHashed += touched.count
        recomputeFrame()
    }

    /// As `update(damage:pixels:stride:)`, for a frame that is not in one buffer: `row(y, x, width, &hasher)` feeds
    /// the `width` pixels of row `y` from column `x`, left to right, in as many pieces as it likes (`feed`).
    /// A tile for which `tile(rect)` gives where its top-left pixel is in memory, and the stride of its rows, is
    /// hashed from there whole; the others row by row through `row`.
    public mutating func update(damage: [Rect], tile whole: (_ rect: Rect) -> (pixels: UnsafeRawPointer, stride: Int)? = { _ in nil },
                                row: (_ y: Int, _ x: Int, _ width: Int, _ hasher: inout TileHasher) -> Void) {
        let touched = tiles(touching: damage)
        guard !touched.isEmpty else { return }
        let buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: Self.tileSize)
        defer { buffer.deallocate() }
        for index in touched {
            let tile = Self.tileRect(index % columns, index / columns, size: size)
            if let found = whole(tile) {
                var hasher = TileHasher()
                var row = found.pixels
                for _ in 0..<tile.height {
                    hasher.hashRow(row, count: tile.width)
                    row += found.stride
                }
                store(hasher.finish(), at: index)
                continue
            }
            var hasher = TileHasher(rowBuffer: buffer)
            for y in tile.y..<(tile.y + tile.height) {
                row(y, tile.x, tile.width, &hasher)
                hasher.endRow()
            }
            store(hasher.finish(), at: index)
        }
        tilesHashed += touched.count
        recomputeFrame()
    }

    private mutating func store(_ result: (hash: UInt64, uniformColor: UInt32?), at index: Int) {
        tileHashes[index] = result.hash
        tileColors[index] = result.uniformColor ?? Self.mixed
    }

    private mutating func recomputeFrame() {
        var hash = Self.offset
        for tile in tileHashes { hash = (hash ^ tile) &* Self.prime }
        let first = tileColors[0]
        let uniform = first != Self.mixed && !tileColors.contains { $0 != first }
        fingerprint = FrameFingerprint(hash: TileHasher.avalanche(hash), uniformColor: uniform ? first : nil)
    }
}

/// The running hash of one tile: Fletcher's two sums over 8-byte words (two pixels, X bytes masked off) in four
/// lanes (word `i` of a row goes to lane `i % 4`; the words left over after the last group of four, and a last odd
/// pixel, to lane 0): per lane `sum += word; weighted += sum`, so a word counts by its value and by its position.
/// Additions only, four lanes as one SIMD value: the loop runs at the speed of reading the memory, where a multiply
/// per word (FNV) ran at a third of a copy's speed. `finish` mixes the eight sums into 64 bits (FNV-1a over them, then
/// xxHash's avalanche). A changed word always changes `sum`; two changes that cancel in `sum` (a swap) change
/// `weighted` unless their difference times their distance is a multiple of 2^64, which needs pixels 512 words
/// apart differing only in the top bit of red: a change detector, not a cryptographic hash. Also whether every pixel
/// had the first one's colour. A row is hashed whole (`hashRow`), or fed in pieces (`feed`, into a row buffer) and
/// hashed at `endRow`: the same pixels give the same hash either way. A plain value.
public struct TileHasher {
    private var sum = SIMD4<UInt64>(TileFingerprints.offset, TileFingerprints.offset ^ 1, TileFingerprints.offset ^ 2,
                                    TileFingerprints.offset ^ 3)
    private var weighted = SIMD4<UInt64>(repeating: 0)
    private var first: UInt32?
    /// The bits in which some word differed from a pair of `first`: zero while the tile is one colour.
    private var difference = SIMD4<UInt64>(repeating: 0)
    /// Where `feed` gathers a row fed in pieces (`TileFingerprints.tileSize` pixels), nil when rows come whole.
    private let rowBuffer: UnsafeMutablePointer<UInt32>?
    private var buffered = 0

    init(rowBuffer: UnsafeMutablePointer<UInt32>? = nil) {
        self.rowBuffer = rowBuffer
    }

    /// Feeds `count` XRGB8888 pixels at `pixels`, the next piece of the row (a row is at most a tile wide).
    public mutating func feed(_ pixels: UnsafeRawPointer, count: Int) {
        guard count > 0, let rowBuffer else { return }
        precondition(buffered + count <= TileFingerprints.tileSize, "a tile row is at most \(TileFingerprints.tileSize) pixels")
        UnsafeMutableRawPointer(rowBuffer + buffered).copyMemory(from: pixels, byteCount: count * 4)
        buffered += count
    }

    /// Ends a row fed in pieces: hashes it.
    public mutating func endRow() {
        guard buffered > 0, let rowBuffer else { return }
        hashRow(UnsafeRawPointer(rowBuffer), count: buffered)
        buffered = 0
    }

    /// Hashes a whole row of `count` XRGB8888 pixels.
    mutating func hashRow(_ pixels: UnsafeRawPointer, count: Int) {
        guard count > 0 else { return }
        let mask: UInt64 = 0x00FF_FFFF_00FF_FFFF
        if first == nil { first = pixels.loadUnaligned(as: UInt32.self) & 0x00FF_FFFF }
        let one = UInt64(first!), pair = one | one << 32
        let masks = SIMD4<UInt64>(repeating: mask), pairs = SIMD4<UInt64>(repeating: pair)
        var sum = sum, weighted = weighted, difference = difference
        var p = pixels, n = count
        while n >= 8 {
            let words = p.loadUnaligned(as: SIMD4<UInt64>.self) & masks
            sum &+= words
            weighted &+= sum
            difference |= words ^ pairs
            p += 32; n -= 8
        }
        var tail = SIMD4<UInt64>(repeating: 0)
        while n >= 2 {
            let word = p.loadUnaligned(as: UInt64.self) & mask
            sum[0] &+= word
            weighted[0] &+= sum[0]
            tail[0] |= word ^ pair
            p += 8; n -= 2
        }
        if n == 1 {
            // A last odd pixel, marked so that it cannot hash as a pair.
            let pixel = UInt64(p.loadUnaligned(as: UInt32.self) & 0x00FF_FFFF)
            sum[0] &+= pixel | 0xFF00_0000_0000_0000
            weighted[0] &+= sum[0]
            tail[0] |= pixel ^ one
        }
        self.sum = sum; self.weighted = weighted; self.difference = difference | tail
    }

    func finish() -> (hash: UInt64, uniformColor: UInt32?) {
        let prime = TileFingerprints.prime
        var h = TileFingerprints.offset
        for lane in 0..<4 {
            h = (h ^ sum[lane]) &* prime
            h = (h ^ weighted[lane]) &* prime
        }
        let uniform = difference == SIMD4(repeating: 0)
        return (Self.avalanche(h), uniform ? first : nil)
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
