import CZlib
import KioskCore
@testable import KioskRemote
import XCTest

/// ZRLE: decoded back (zlib inflate, then the tiles), an update gives the pixels Raw gives; one-colour tiles are solid,
/// runs are run-length coded, and the stream carries on across updates as the protocol requires.
final class ZRLETests: XCTestCase {
    /// 100x70: a flat background with a 30x10 bar and noise over the top right tile, so every tile kind appears.
    private let size = Size(width: 100, height: 70)
    private var frame: [UInt8] {
        var bytes: [UInt8] = []
        for y in 0..<70 {
            for x in 0..<100 {
                var pixel: [UInt8] = [0x40, 0x30, 0x20, 0]
                if (10..<40).contains(x), (5..<15).contains(y) { pixel = [0x20, 0x80, 0xE0, 0] }
                if x >= 64, y < 64 { pixel = [UInt8(x * 7 % 256), UInt8(y * 13 % 256), UInt8((x + y) * 5 % 256), 0] }
                bytes += pixel
            }
        }
        return bytes
    }

    /// An inflater that keeps its state across calls, as a viewer's does.
    private final class Inflater {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        init() {
            stream.initialize(to: z_stream())
            XCTAssertEqual(inflateInit_(stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)), Z_OK)
        }
        deinit { inflateEnd(stream); stream.deallocate() }
        func inflate(_ input: [UInt8]) -> [UInt8] {
            var input = input, out: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65536)
            input.withUnsafeMutableBufferPointer { source in
                stream.pointee.next_in = source.baseAddress
                stream.pointee.avail_in = uInt(source.count)
                repeat {
                    chunk.withUnsafeMutableBufferPointer { target in
                        stream.pointee.next_out = target.baseAddress
                        stream.pointee.avail_out = uInt(target.count)
                        _ = CZlib.inflate(stream, Z_SYNC_FLUSH)
                        out += target[0..<(target.count - Int(stream.pointee.avail_out))]
                    }
                } while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0
            }
            return out
        }
    }

    /// The rectangles of an update decoded into XRGB pixels of the server's format (3-byte CPIXELs), and the
    /// subencodings seen.
    private func decode(_ update: [UInt8], into pixels: inout [UInt8], inflater: Inflater) -> [UInt8] {
        var subencodings: [UInt8] = []
        var i = 4
        func u16() -> Int { defer { i += 2 }; return Int(update[i]) << 8 | Int(update[i + 1]) }
        for _ in 0..<(Int(update[2]) << 8 | Int(update[3])) {
            let x = u16(), y = u16(), w = u16(), h = u16()
            XCTAssertEqual(Array(update[i..<(i + 4)]), [0, 0, 0, 16])
            i += 4
            let length = update[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) }
            i += 4
            let data = inflater.inflate(Array(update[i..<(i + length)]))
            i += length
            var d = 0
            func cpixel() -> [UInt8] { defer { d += 3 }; return Array(data[d..<(d + 3)]) + [0] }
            for ty in stride(from: y, to: y + h, by: 64) {
                for tx in stride(from: x, to: x + w, by: 64) {
                    let tw = min(64, x + w - tx), th = min(64, y + h - ty)
                    var tile: [[UInt8]] = []
                    let kind = data[d]
                    d += 1
                    subencodings.append(kind)
                    switch kind {
                    case 1: tile = Array(repeating: cpixel(), count: tw * th)
                    case 0: for _ in 0..<(tw * th) { tile.append(cpixel()) }
                    case 128:
                        while tile.count < tw * th {
                            let p = cpixel()
                            var length = 1
                            while data[d] == 255 { length += 255; d += 1 }
                            length += Int(data[d]); d += 1
                            tile += Array(repeating: p, count: length)
                        }
                    default: XCTFail("subencoding \(kind)")
                    }
                    for (n, p) in tile.enumerated() {
                        let o = ((ty + n / tw) * size.width + tx + n % tw) * 4
                        pixels.replaceSubrange(o..<(o + 4), with: p)
                    }
                }
            }
        }
        XCTAssertEqual(i, update.count, "nothing after the last rectangle")
        return subencodings
    }

    func testZRLEDecodesToTheFrameAndIsSmallerThanRaw() throws {
        let stream = try ZRLEStream(), inflater = Inflater()
        let whole = Rect(size: size)
        let update = RFBEncoder.update(frame: frame, size: size, rects: [whole], format: .xrgb8888, encoding: .zrle(stream))
        var decoded = [UInt8](repeating: 0xAA, count: frame.count)
        let kinds = decode(update, into: &decoded, inflater: inflater)
        XCTAssertEqual(decoded, frame)
        XCTAssertEqual(Set(kinds), [1, 128, 0], "solid, runs and raw tiles: \(kinds)")
        XCTAssertLessThan(update.count, RFBEncoder.rawSize(of: [whole], in: size) / 3, "a third of Raw at most, a third of the frame being noise")
        // The stream goes on: a second update, of two rectangles, decodes with the same inflater.
        let rects = [Rect(x: 65, y: 55, width: 20, height: 15), Rect(x: 0, y: 0, width: 5, height: 5)]
        var again = [UInt8](repeating: 0, count: frame.count)
        _ = decode(RFBEncoder.update(frame: frame, size: size, rects: rects, format: .xrgb8888, encoding: .zrle(stream)),
                   into: &again, inflater: inflater)
        for rect in rects {
            for y in rect.y..<(rect.y + rect.height) {
                let o = (y * size.width + rect.x) * 4
                XCTAssertEqual(again[o..<(o + rect.width * 4)], frame[o..<(o + rect.width * 4)], "row \(y) of \(rect)")
            }
        }
    }

    func testCPIXELLayouts() {
        XCTAssertEqual(RFBEncoder.cpixel(.xrgb8888).count, 3)
        XCTAssertEqual(RFBEncoder.cpixel(.xrgb8888).first, 0, "little-endian: the three low bytes come first")
        var high = RFBPixelFormat.xrgb8888
        (high.redShift, high.greenShift, high.blueShift) = (24, 16, 8)
        XCTAssertEqual(RFBEncoder.cpixel(high).first, 1, "channels in the high bytes: bytes 1 to 3")
        var full = RFBPixelFormat.xrgb8888
        full.depth = 32
        XCTAssertEqual(RFBEncoder.cpixel(full).count, 4)
    }
}
