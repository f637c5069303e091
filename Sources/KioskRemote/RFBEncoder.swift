import KioskCore

/// FramebufferUpdate messages (RFC 6143 §7.6.1) from a captured frame: rectangles in Raw encoding, each pixel in
/// the client's format. Runs on the encoding worker: it reads an immutable frame and returns bytes. Pure functions.
public enum RFBEncoder {
    /// The update holding `rects` of `frame` (XRGB8888 rows of `size`, stride width * 4), clipped to the frame.
    public static func update(frame: [UInt8], size: Size, rects: [Rect], format: RFBPixelFormat) -> [UInt8] {
        let screen = Rect(size: size)
        let clipped = rects.map { $0.intersection(screen) }.filter { !$0.isEmpty }
        var out: [UInt8] = [0, 0] + RFBSession.u16(clipped.count)
        out.reserveCapacity(4 + clipped.reduce(0) { $0 + 12 + $1.width * $1.height * 4 })
        let native = format == .xrgb8888
        frame.withUnsafeBufferPointer { pixels in
            for rect in clipped {
                out += RFBSession.u16(rect.x) + RFBSession.u16(rect.y) + RFBSession.u16(rect.width) + RFBSession.u16(rect.height)
                out += [0, 0, 0, 0]  // Raw
                for row in rect.y..<(rect.y + rect.height) {
                    let start = (row * size.width + rect.x) * 4
                    let line = pixels[start..<(start + rect.width * 4)]
                    if native {
                        out.append(contentsOf: line)
                    } else {
                        var p = line.startIndex
                        while p < line.endIndex {
                            let b = UInt32(line[p]), g = UInt32(line[p + 1]), r = UInt32(line[p + 2])
                            let value = channel(r, format.redMax, format.redShift) | channel(g, format.greenMax, format.greenShift)
                                | channel(b, format.blueMax, format.blueShift)
                            if format.bigEndian {
                                out += [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                                        UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
                            } else {
                                out += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8),
                                        UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 24)]
                            }
                            p += 4
                        }
                    }
                }
            }
        }
        return out
    }

    /// The bytes an update of `rects` takes in Raw encoding, without making it (the bench's figure).
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
