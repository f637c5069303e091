/// An RFB pixel format (RFC 6143 §7.4): how a client wants pixels sent. kioskd sends 32-bit true colour in any
/// channel layout a client asks for (8 bits or fewer per channel); anything else is refused with a reason. A plain
/// value; any thread.
public struct RFBPixelFormat: Sendable, Equatable {
    public var bitsPerPixel: UInt8
    public var depth: UInt8
    public var bigEndian: Bool
    public var trueColour: Bool
    public var redMax: UInt16, greenMax: UInt16, blueMax: UInt16
    public var redShift: UInt8, greenShift: UInt8, blueShift: UInt8

    /// The composed frame's own layout, XRGB8888 little-endian: what the server announces, sent by copying rows.
    public static let xrgb8888 = RFBPixelFormat(bitsPerPixel: 32, depth: 24, bigEndian: false, trueColour: true,
                                                redMax: 255, greenMax: 255, blueMax: 255, redShift: 16, greenShift: 8, blueShift: 0)

    public init(bitsPerPixel: UInt8, depth: UInt8, bigEndian: Bool, trueColour: Bool, redMax: UInt16, greenMax: UInt16,
                blueMax: UInt16, redShift: UInt8, greenShift: UInt8, blueShift: UInt8) {
        self.bitsPerPixel = bitsPerPixel
        self.depth = depth
        self.bigEndian = bigEndian
        self.trueColour = trueColour
        self.redMax = redMax
        self.greenMax = greenMax
        self.blueMax = blueMax
        self.redShift = redShift
        self.greenShift = greenShift
        self.blueShift = blueShift
    }

    /// The 16 bytes of a PIXEL_FORMAT structure.
    init(bytes b: ArraySlice<UInt8>) {
        let i = b.startIndex
        func u16(_ at: Int) -> UInt16 { UInt16(b[i + at]) << 8 | UInt16(b[i + at + 1]) }
        self.init(bitsPerPixel: b[i], depth: b[i + 1], bigEndian: b[i + 2] != 0, trueColour: b[i + 3] != 0,
                  redMax: u16(4), greenMax: u16(6), blueMax: u16(8), redShift: b[i + 10], greenShift: b[i + 11], blueShift: b[i + 12])
    }

    var bytes: [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        return [bitsPerPixel, depth, bigEndian ? 1 : 0, trueColour ? 1 : 0] + u16(redMax) + u16(greenMax) + u16(blueMax)
            + [redShift, greenShift, blueShift, 0, 0, 0]
    }

    /// Why kioskd cannot send this format, or nil when it can.
    var unsupportedReason: String? {
        guard bitsPerPixel == 32 else { return "\(bitsPerPixel) bits per pixel (only 32-bit true colour is served)" }
        guard trueColour else { return "a colour map (only 32-bit true colour is served)" }
        for (name, max, shift) in [("red", redMax, redShift), ("green", greenMax, greenShift), ("blue", blueMax, blueShift)] {
            guard max > 0, max <= 255, max & (max &+ 1) == 0 else { return "\(name) maximum \(max) (must be 2^n-1, at most 255)" }
            guard Int(shift) + max.nonzeroBitCount <= 32 else { return "\(name) shift \(shift) (the channel passes bit 31)" }
        }
        return nil
    }
}
