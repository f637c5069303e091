/// How far the frame a CRTC scanned out may differ from the composed frame before it counts as a mismatch. A
/// pixel differs when one of its red, green or blue channels differs by more than `channelDifference` (the X byte
/// of XRGB8888 is undefined in a writeback buffer and never compared); the frames mismatch when more than
/// `pixelFraction` of the pixels differ. The defaults allow a display engine's dithering or colour conversion
/// (a few levels per channel) and a cursor-sized patch (0.1 % of 1920x1080 is 2073 pixels), and catch a stale
/// buffer, a wrong plane, torn or shifted scanout and corrupted memory. A plain value.
public struct ScanoutTolerance: Sendable, Equatable {
    /// Levels (of 255) a channel may differ by before its pixel counts as differing.
    public var channelDifference: Int
    /// The share of pixels (0...1) that may differ before the frames mismatch.
    public var pixelFraction: Double

    public init(channelDifference: Int = 8, pixelFraction: Double = 0.001) {
        self.channelDifference = channelDifference
        self.pixelFraction = pixelFraction
    }
}

/// One composed frame compared with the frame the CRTC produced for the same present (read back through a
/// writeback connector): how many pixels differ beyond the tolerance and by how much at most. Pure; computed off
/// the main loop (a 1920x1080 frame is two million pixels). A plain value.
public struct ScanoutComparison: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// Pixels with a channel differing by more than `tolerance.channelDifference`.
    public let differingPixels: Int
    /// The largest difference of any red, green or blue channel, over every pixel (0...255).
    public let maxChannelDifference: Int
    public let tolerance: ScanoutTolerance

    public var pixelCount: Int { width * height }
    /// The share of pixels that differ (0...1).
    public var differingFraction: Double { pixelCount == 0 ? 0 : Double(differingPixels) / Double(pixelCount) }
    /// Whether the frames match within the tolerance.
    public var matched: Bool { differingFraction <= tolerance.pixelFraction }

    /// Compares two XRGB8888 frames of `width` x `height` pixels, rows of `width * 4` bytes.
    /// - Throws: `OutputError` naming the sizes when either buffer is not that size.
    public init(composed: [UInt8], scanout: [UInt8], width: Int, height: Int, tolerance: ScanoutTolerance = ScanoutTolerance()) throws {
        let bytes = width * height * 4
        guard width > 0, height > 0, composed.count == bytes, scanout.count == bytes else {
            throw OutputError("scanout comparison: frames of \(composed.count) and \(scanout.count) bytes for \(width)x\(height) (\(bytes) bytes each expected)")
        }
        self.width = width
        self.height = height
        self.tolerance = tolerance
        var differing = 0, maxDifference = 0
        let limit = tolerance.channelDifference
        composed.withUnsafeBufferPointer { a in
            scanout.withUnsafeBufferPointer { b in
                var i = 0
                while i < bytes {
                    // Little-endian XRGB8888: bytes B, G, R, X.
                    let db = abs(Int(a[i]) - Int(b[i]))
                    let dg = abs(Int(a[i + 1]) - Int(b[i + 1]))
                    let dr = abs(Int(a[i + 2]) - Int(b[i + 2]))
                    let d = max(db, dg, dr)
                    if d > limit { differing += 1 }
                    if d > maxDifference { maxDifference = d }
                    i += 4
                }
            }
        }
        differingPixels = differing
        maxChannelDifference = maxDifference
    }

    /// What differed, in a few words, for logs, `error` events and the health reason.
    public var summary: String {
        let percent = (differingFraction * 100_000).rounded() / 1000
        return "\(differingPixels) of \(pixelCount) pixels (\(percent) %) differ by more than \(tolerance.channelDifference) levels (at most \(maxChannelDifference)); tolerance \(tolerance.pixelFraction * 100) %"
    }
}
