/// The hash proof of play keeps of a composed frame: FNV-1a (64 bits) over the red, green and blue bytes of each
/// pixel, row by row, of an XRGB8888 frame (the X byte, which scanout ignores, is left out, so a screenshot saved as
/// PNG and read back hashes the same). Written as 16 hex digits. Not cryptographic: it tells frames apart, it does
/// not stand against forgery. A namespace; any thread.
public enum FrameHash {
    /// `pixels`: little-endian XRGB8888 (B, G, R, X in memory), `width` × `height`, rows `stride` bytes apart.
    public static func of(xrgb pixels: [UInt8], width: Int, height: Int, stride: Int) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let prime: UInt64 = 0x0000_0100_0000_01b3
        pixels.withUnsafeBufferPointer { bytes in
            for y in 0..<height {
                var i = y * stride
                for _ in 0..<width {
                    // R, G, B order.
                    hash = (hash ^ UInt64(bytes[i + 2])) &* prime
                    hash = (hash ^ UInt64(bytes[i + 1])) &* prime
                    hash = (hash ^ UInt64(bytes[i])) &* prime
                    i += 4
                }
            }
        }
        return String(hash, radix: 16).leftPadded(to: 16)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
