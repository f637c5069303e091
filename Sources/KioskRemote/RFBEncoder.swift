import KioskCore

/// How a client's rectangles are encoded: Raw, or ZRLE (RFC 6143 §7.7.6) with the connection's zlib stream when the
/// client prefers it.
public enum RFBEncoding: Sendable {
    case raw
    case zrle(ZRLEStream)

    public static let rawNumber: Int32 = 0
    public static let zrleNumber: Int32 = 16
}

/// FramebufferUpdate messages (RFC 6143 §7.6.1) from a captured frame: rectangles in Raw or ZRLE encoding, each
/// pixel in the client's format. Runs on the encoding worker: it reads an immutable frame and returns bytes.
public enum RFBEncoder {
    /// The update holding `rects` of `frame` (XRGB8888 rows of `size`, stride width * 4), clipped to the frame.
    public static func update(frame: [UInt8], size: Size, rects: [Rect], format: RFBPixelFormat,
                              encoding: RFBEncoding = .raw) -> [UInt8] {
        let screen = Rect(size: size)
        let clipped = rects.map { $0.intersection(screen) }.filter { !$0.isEmpty }
        var out: [UInt8] = [0, 0] + RFBSession.u16(clipped.count)
        frame.withUnsafeBufferPointer { pixels in
            for rect in clipped {
                out += RFBSession.u16(rect.x) + RFBSession.u16(rect.y) + RFBSession.u16(rect.width) + RFBSession.u16(rect.height)
                switch encoding {
                case .raw:
                    out += [0, 0, 0, 0]
                    raw(pixels, size: size, rect: rect, format: format, into: &out)
                case .zrle(let stream):
                    out += [0, 0, 0, 16]
                    let compressed = stream.compress(zrleTiles(pixels, size: size, rect: rect, format: format))
                    out += RFBSession.u32(compressed.count) + compressed
                }
            }
        }
        return out
    }

    private static func raw(_ pixels: UnsafeBufferPointer<UInt8>, size: Size, rect: Rect, format: RFBPixelFormat, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + rect.width * rect.height * 4)
        let native = format == .xrgb8888
        for row in rect.y..<(rect.y + rect.height) {
            let start = (row * size.width + rect.x) * 4
            if native {
                out.append(contentsOf: pixels[start..<(start + rect.width * 4)])
            } else {
                for p in stride(from: start, to: start + rect.width * 4, by: 4) {
                    append(value(pixels, p, format), bytes: 4, from: 0, format: format, to: &out)
                }
            }
        }
    }

    /// The client's pixel value of the frame's pixel at byte offset `p`.
    private static func value(_ pixels: UnsafeBufferPointer<UInt8>, _ p: Int, _ format: RFBPixelFormat) -> UInt32 {
        let b = UInt32(pixels[p]), g = UInt32(pixels[p + 1]), r = UInt32(pixels[p + 2])
        return channel(r, format.redMax, format.redShift) | channel(g, format.greenMax, format.greenShift)
            | channel(b, format.blueMax, format.blueShift)
    }

    /// `count` bytes of `value` in the client's byte order, starting at byte `first` of the 4.
    private static func append(_ value: UInt32, bytes count: Int, from first: Int, format: RFBPixelFormat, to out: inout [UInt8]) {
        for i in first..<(first + count) {
            let shift = format.bigEndian ? UInt32(8 * (3 - i)) : UInt32(8 * i)
            out.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    /// ZRLE's compressed pixel: 3 bytes where every channel fits in the pixel's 3 least (or most) significant bytes,
    /// which bytes of the 4 those are in the client's order, else the whole pixel.
    static func cpixel(_ format: RFBPixelFormat) -> (count: Int, first: Int) {
        let channels = [(format.redMax, format.redShift), (format.greenMax, format.greenShift), (format.blueMax, format.blueShift)]
        let top = channels.map { Int($0.1) + $0.0.nonzeroBitCount }.max() ?? 32
        let bottom = channels.map { Int($0.1) }.min() ?? 0
        if format.depth <= 24, top <= 24 { return (3, format.bigEndian ? 1 : 0) }
        if format.depth <= 24, bottom >= 8 { return (3, format.bigEndian ? 0 : 1) }
        return (4, 0)
    }

    /// A rectangle's 64x64 tiles, left to right and top to bottom, each one colour (solid), runs (plain RLE) or raw
    /// CPIXELs, whichever is smallest; uncompressed.
    static func zrleTiles(_ pixels: UnsafeBufferPointer<UInt8>, size: Size, rect: Rect, format: RFBPixelFormat) -> [UInt8] {
        let (cpixelBytes, first) = cpixel(format)
        var out: [UInt8] = []
        var tile: [UInt32] = []
        tile.reserveCapacity(64 * 64)
        for ty in stride(from: rect.y, to: rect.y + rect.height, by: 64) {
            let th = min(64, rect.y + rect.height - ty)
            for tx in stride(from: rect.x, to: rect.x + rect.width, by: 64) {
                let tw = min(64, rect.x + rect.width - tx)
                tile.removeAll(keepingCapacity: true)
                for row in ty..<(ty + th) {
                    let start = (row * size.width + tx) * 4
                    for p in stride(from: start, to: start + tw * 4, by: 4) { tile.append(value(pixels, p, format)) }
                }
                var runs: [(value: UInt32, length: Int)] = []
                for v in tile {
                    if let last = runs.last, last.value == v { runs[runs.count - 1].length += 1 } else { runs.append((v, 1)) }
                }
                if runs.count == 1 {
                    out.append(1)
                    append(tile[0], bytes: cpixelBytes, from: first, format: format, to: &out)
                    continue
                }
                let rleBytes = runs.reduce(0) { $0 + cpixelBytes + ($1.length - 1) / 255 + 1 }
                if rleBytes < tile.count * cpixelBytes {
                    out.append(128)
                    for run in runs {
                        append(run.value, bytes: cpixelBytes, from: first, format: format, to: &out)
                        out += [UInt8](repeating: 255, count: (run.length - 1) / 255)
                        out.append(UInt8((run.length - 1) % 255))
                    }
                } else {
                    out.append(0)
                    for v in tile { append(v, bytes: cpixelBytes, from: first, format: format, to: &out) }
                }
            }
        }
        return out
    }

    /// The bytes an update of `rects` takes in Raw encoding, without making it.
    public static func rawSize(of rects: [Rect], in size: Size) -> Int {
        let screen = Rect(size: size)
        return 4 + rects.map { $0.intersection(screen) }.filter { !$0.isEmpty }.reduce(0) { $0 + 12 + $1.width * $1.height * 4 }
    }

    private static func channel(_ value: UInt32, _ max: UInt16, _ shift: UInt8) -> UInt32 {
        ((value * UInt32(max) + 127) / 255) << UInt32(shift)
    }
}

/// A client's damage since its last update: rectangles of the screen, merged into their bounding box past
/// `maxRects`, so a slow client's backlog stays small however many frames it missed. A plain value.
public struct RFBDamage: Sendable, Equatable {
    public static let maxRects = 16
    public private(set) var rects: [Rect] = []

    public init() {}

    public var isEmpty: Bool { rects.isEmpty }

    public mutating func add(_ rect: Rect) {
        guard !rect.isEmpty else { return }
        if rects.contains(where: { $0.encloses(rect) }) { return }
        rects.removeAll { rect.encloses($0) }
        rects.append(rect)
        if rects.count > Self.maxRects {
            rects = [rects.dropFirst().reduce(rects[0]) { Self.union($0, $1) }]
        }
    }

    /// Takes the damage inside `area`, leaving the rest.
    public mutating func take(in area: Rect) -> [Rect] {
        let taken = rects.map { $0.intersection(area) }.filter { !$0.isEmpty }
        rects = rects.filter { !area.encloses($0) }
        return taken
    }

    static func union(_ a: Rect, _ b: Rect) -> Rect {
        let x = min(a.x, b.x), y = min(a.y, b.y)
        return Rect(x: x, y: y, width: max(a.x + a.width, b.x + b.width) - x, height: max(a.y + a.height, b.y + b.height) - y)
    }
}
