import KioskCore

/// A framebuffer's true-colour pixel layout as `struct fb_var_screeninfo` gives it: bits per pixel and, per
/// channel, the bit offset and length inside a little-endian pixel. XRGB8888 is 32 bpp with red 16/8, green 8/8,
/// blue 0/8; RGB565, common on small SPI panels, is 16 bpp with red 11/5, green 5/6, blue 0/5. A plain value, used
/// on any thread.
public struct FbdevPixelFormat: Hashable, Sendable, CustomStringConvertible {
    public struct Channel: Hashable, Sendable {
        public var offset: Int
        public var length: Int
        public init(offset: Int, length: Int) { self.offset = offset; self.length = length }
    }

    public var bitsPerPixel: Int
    public var red: Channel
    public var green: Channel
    public var blue: Channel

    public static let xrgb8888 = FbdevPixelFormat(bitsPerPixel: 32, red: .init(offset: 16, length: 8),
                                                  green: .init(offset: 8, length: 8), blue: .init(offset: 0, length: 8))
    public static let rgb565 = FbdevPixelFormat(bitsPerPixel: 16, red: .init(offset: 11, length: 5),
                                                green: .init(offset: 5, length: 6), blue: .init(offset: 0, length: 5))

    /// Checks the layout: 16, 24 or 32 bits per pixel, each channel 1 to 8 bits long and inside the pixel.
    /// - Throws: `OutputError` naming `device` and what is wrong with the layout.
    public init(bitsPerPixel: Int, red: Channel, green: Channel, blue: Channel, device: String) throws {
        guard [16, 24, 32].contains(bitsPerPixel) else {
            throw OutputError("framebuffer \(device): \(bitsPerPixel) bits per pixel is not supported; kioskd needs true colour at 16, 24 or 32 bits per pixel (e.g. fbset -depth 32)")
        }
        for (name, channel) in [("red", red), ("green", green), ("blue", blue)] {
            guard (1...8).contains(channel.length), channel.offset >= 0, channel.offset + channel.length <= bitsPerPixel else {
                throw OutputError("framebuffer \(device): \(name) channel at bit \(channel.offset), \(channel.length) bits long, does not fit a \(bitsPerPixel)-bit pixel")
            }
        }
        self.init(bitsPerPixel: bitsPerPixel, red: red, green: green, blue: blue)
    }

    public init(bitsPerPixel: Int, red: Channel, green: Channel, blue: Channel) {
        self.bitsPerPixel = bitsPerPixel; self.red = red; self.green = green; self.blue = blue
    }

    public var bytesPerPixel: Int { bitsPerPixel / 8 }

    /// `RGB565`, `XRGB8888`, or the layout spelled out (`32 bpp r0:8 g8:8 b16:8`).
    public var description: String {
        switch self {
        case .xrgb8888: "XRGB8888"
        case .rgb565: "RGB565"
        default: "\(bitsPerPixel) bpp r\(red.offset):\(red.length) g\(green.offset):\(green.length) b\(blue.offset):\(blue.length)"
        }
    }

    /// One XRGB8888 pixel in this layout: each channel keeps its top `length` bits.
    @inline(__always)
    public func pack(_ xrgb: UInt32) -> UInt32 {
        let r = (xrgb >> 16) & 0xFF, g = (xrgb >> 8) & 0xFF, b = xrgb & 0xFF
        return (r >> UInt32(8 - red.length)) << UInt32(red.offset)
            | (g >> UInt32(8 - green.length)) << UInt32(green.offset)
            | (b >> UInt32(8 - blue.length)) << UInt32(blue.offset)
    }

    /// One pixel of this layout as XRGB8888: each channel widened to 8 bits by repeating its top bits, so full
    /// intensity stays 0xFF.
    @inline(__always)
    public func unpack(_ pixel: UInt32) -> UInt32 {
        func widen(_ channel: Channel) -> UInt32 {
            let value = (pixel >> UInt32(channel.offset)) & ((1 << UInt32(channel.length)) - 1)
            var wide = value << UInt32(8 - channel.length)
            var filled = channel.length
            while filled < 8 {
                wide |= wide >> UInt32(filled)
                filled *= 2
            }
            return wide & 0xFF
        }
        return widen(red) << 16 | widen(green) << 8 | widen(blue)
    }

    /// Copies `rect` of an XRGB8888 image into an image of this layout, converting each pixel; the destination is
    /// only written, a row at a time, never read (a framebuffer is write-combined or uncached memory on the boards
    /// kioskd targets). Rows go through `scratch`, at least `rect.width * bytesPerPixel` bytes.
    public func convert(_ rect: Rect, from source: UnsafeRawPointer, sourceStride: Int,
                        to destination: UnsafeMutableRawPointer, destinationStride: Int,
                        scratch: UnsafeMutableRawPointer) {
        guard rect.width > 0, rect.height > 0 else { return }
        let bytes = bytesPerPixel
        let rowBytes = rect.width * bytes
        for y in rect.y..<rect.maxY {
            let sourceRow = source + y * sourceStride + rect.x * 4
            let destinationRow = destination + y * destinationStride + rect.x * bytes
            if self == .xrgb8888 {
                destinationRow.copyMemory(from: sourceRow, byteCount: rowBytes)
                continue
            }
            for x in 0..<rect.width {
                let pixel = pack(sourceRow.loadUnaligned(fromByteOffset: x * 4, as: UInt32.self))
                switch bytes {
                case 2: scratch.storeBytes(of: UInt16(truncatingIfNeeded: pixel).littleEndian, toByteOffset: x * 2, as: UInt16.self)
                case 3:
                    scratch.storeBytes(of: UInt8(truncatingIfNeeded: pixel), toByteOffset: x * 3, as: UInt8.self)
                    scratch.storeBytes(of: UInt8(truncatingIfNeeded: pixel >> 8), toByteOffset: x * 3 + 1, as: UInt8.self)
                    scratch.storeBytes(of: UInt8(truncatingIfNeeded: pixel >> 16), toByteOffset: x * 3 + 2, as: UInt8.self)
                default: scratch.storeBytes(of: pixel.littleEndian, toByteOffset: x * 4, as: UInt32.self)
                }
            }
            destinationRow.copyMemory(from: scratch, byteCount: rowBytes)
        }
    }

    /// An image of this layout, `size` pixels with `stride` bytes a row, as XRGB8888 bytes (stride = width * 4).
    public func xrgb8888(from source: UnsafeRawPointer, size: Size, stride: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size.width * size.height * 4)
        let bytes = bytesPerPixel
        out.withUnsafeMutableBytes { dst in
            for y in 0..<size.height {
                let row = source + y * stride
                for x in 0..<size.width {
                    var pixel: UInt32 = 0
                    for i in 0..<bytes { pixel |= UInt32(row.load(fromByteOffset: x * bytes + i, as: UInt8.self)) << UInt32(8 * i) }
                    dst.storeBytes(of: unpack(pixel).littleEndian, toByteOffset: (y * size.width + x) * 4, as: UInt32.self)
                }
            }
        }
        return out
    }
}
