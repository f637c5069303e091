import Foundation

/// Not product code: writes test and bench PNGs of any size without holding their pixels, for measuring what a
/// decode costs. The image is four flat quadrants (top left, top right, bottom left, bottom right), RGB or RGBA,
/// optionally Adam7-interlaced. A row equal to the row before it (in its pass) is written with the Up filter as a
/// run of zero bytes, deflated by hand with fixed Huffman codes as back-references, so a 12000x12000 poster is a
/// file of a few MB made in well under a second. A plain value; any thread.
public struct QuadrantPNG: Sendable {
    public var width: Int
    public var height: Int
    /// RGBA bytes of each quadrant: top left, top right, bottom left, bottom right.
    public var colours: [[UInt8]]
    public var hasAlpha: Bool
    public var interlaced: Bool

    public init(width: Int, height: Int, colours: [[UInt8]], hasAlpha: Bool = false, interlaced: Bool = false) {
        precondition(colours.count == 4 && colours.allSatisfy { $0.count == 4 })
        self.width = width; self.height = height; self.colours = colours
        self.hasAlpha = hasAlpha; self.interlaced = interlaced
    }

    /// The RGBA colour at (x, y).
    public func colour(x: Int, y: Int) -> [UInt8] {
        colours[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
    }

    public func write(to path: String) throws {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header += Self.bigEndian(width) + Self.bigEndian(height)
        header += [8, hasAlpha ? 6 : 2, 0, 0, interlaced ? 1 : 0]
        Self.chunk("IHDR", header, into: &png)
        Self.chunk("IDAT", deflatedRows(), into: &png)
        Self.chunk("IEND", [], into: &png)
        guard FileManager.default.createFile(atPath: path, contents: Data(png)) else {
            throw BenchError("png \(path): cannot create the file")
        }
    }

    /// Adam7 passes as (first column, column step, first row, row step); one pass of everything when not interlaced.
    private var passes: [(Int, Int, Int, Int)] {
        interlaced ? [(0, 8, 0, 8), (4, 8, 0, 8), (0, 4, 4, 8), (2, 4, 0, 4), (0, 2, 2, 4), (1, 2, 0, 2), (0, 1, 1, 2)]
            : [(0, 1, 0, 1)]
    }

    /// The zlib stream of every pass's filtered rows.
    private func deflatedRows() -> [UInt8] {
        var bits = BitWriter()
        var adler = Adler32()
        bits.bytes = [0x78, 0x01]
        bits.write(1, count: 1)  // the last block
        bits.write(1, count: 2)  // fixed Huffman codes
        let channels = hasAlpha ? 4 : 3
        for (x0, dx, y0, dy) in passes {
            let columns = x0 < width ? (width - x0 + dx - 1) / dx : 0
            guard columns > 0 else { continue }
            // Columns of the pass in the left half; every row of a half is the same.
            let leftColumns = x0 < width / 2 ? (width / 2 - x0 + dx - 1) / dx : 0
            var previousHalf: Int?
            for y in stride(from: y0, to: height, by: dy) {
                let half = y < height / 2 ? 0 : 2
                if half == previousHalf {
                    bits.literal(2)  // Up: each byte minus the one above, all zero
                    adler.add(2)
                    bits.zeros(columns * channels)
                    adler.addZeros(columns * channels)
                } else {
                    bits.literal(0)
                    adler.add(0)
                    for column in 0..<columns {
                        for byte in colours[half + (column < leftColumns ? 0 : 1)].prefix(channels) {
                            bits.literal(byte)
                            adler.add(byte)
                        }
                    }
                }
                previousHalf = half
            }
        }
        bits.write(0, count: 7)  // end of block: code 256 is seven zero bits
        bits.flush()
        return bits.bytes + Self.bigEndian(Int(adler.value))
    }

    private static func bigEndian(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func chunk(_ type: String, _ data: [UInt8], into png: inout [UInt8]) {
        let typed = Array(type.utf8) + data
        png += bigEndian(data.count) + typed + bigEndian(Int(crc32(typed)))
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        (0..<8).reduce(UInt32(n)) { c, _ in c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        bytes.withUnsafeBufferPointer { buffer in
            crcTable.withUnsafeBufferPointer { table in
                for byte in buffer { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
            }
        }
        return c ^ 0xFFFF_FFFF
    }
}

/// Deflate's bit order: values least significant bit first, Huffman codes most significant bit first.
private struct BitWriter {
    var bytes: [UInt8] = []
    private var pending: UInt32 = 0
    private var pendingCount = 0

    mutating func write(_ value: UInt32, count: Int) {
        pending |= value << UInt32(pendingCount)
        pendingCount += count
        while pendingCount >= 8 {
            bytes.append(UInt8(pending & 0xFF))
            pending >>= 8
            pendingCount -= 8
        }
    }

    mutating func code(_ code: UInt32, count: Int) {
        var reversed: UInt32 = 0
        for i in 0..<count where code & (1 << UInt32(i)) != 0 { reversed |= 1 << UInt32(count - 1 - i) }
        write(reversed, count: count)
    }

    /// A literal byte with the fixed code: 0...143 in 8 bits from 0x30, 144...255 in 9 bits from 0x190.
    mutating func literal(_ byte: UInt8) {
        if byte < 144 { code(0x30 + UInt32(byte), count: 8) } else { code(0x190 + UInt32(byte) - 144, count: 9) }
    }

    /// `count` zero bytes: one literal, then copies of it at distance 1 (258 at a time, code 285).
    mutating func zeros(_ count: Int) {
        guard count > 0 else { return }
        literal(0)
        var left = count - 1
        while left >= 258 + 3 || left == 258 {
            code(0xC5, count: 8)  // length symbol 285 = 258 bytes, 8 bits from 0xC0 + 5
            code(0, count: 5)  // distance code 0 = 1
            left -= 258
        }
        while left > 0 {
            // What is left (at most 260 here) as literals when short, else one last copy.
            if left < 3 {
                literal(0)
                left -= 1
            } else {
                let length = min(left, 258)
                lengthSymbol(length)
                code(0, count: 5)
                left -= length
            }
        }
    }

    /// The fixed code and extra bits of a copy of `length` (3...258) bytes.
    private mutating func lengthSymbol(_ length: Int) {
        let bases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163,
                     195, 227, 258]
        let extras = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
        let index = bases.lastIndex { $0 <= length }!
        let symbol = 257 + index
        if symbol < 280 { code(UInt32(symbol - 256), count: 7) } else { code(0xC0 + UInt32(symbol - 280), count: 8) }
        write(UInt32(length - bases[index]), count: extras[index])
    }

    mutating func flush() {
        if pendingCount > 0 { bytes.append(UInt8(pending & 0xFF)) }
        pending = 0
        pendingCount = 0
    }
}

/// zlib's checksum, with runs of zero bytes added in one step.
private struct Adler32 {
    private var a: UInt64 = 1
    private var b: UInt64 = 0

    mutating func add(_ byte: UInt8) {
        a = (a + UInt64(byte)) % 65521
        b = (b + a) % 65521
    }

    mutating func addZeros(_ count: Int) {
        b = (b + UInt64(count % 65521) * a) % 65521
    }

    var value: UInt32 { UInt32(b << 16 | a) }
}
