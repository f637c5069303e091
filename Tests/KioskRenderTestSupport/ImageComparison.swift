import KioskCore

/// The result of comparing two XRGB8888 images channel by channel. A plain value; crosses threads freely.
public struct ImageDiff: Hashable, Sendable, CustomStringConvertible {
    public struct Location: Hashable, Sendable {
        public var x: Int
        public var y: Int
        public init(x: Int, y: Int) { self.x = x; self.y = y }
    }

    /// Pixels with at least one colour channel differing by more than the tolerance.
    public var differingPixels: Int
    /// The largest difference in any colour channel of any pixel, whether or not it exceeded the tolerance.
    public var maxChannelDelta: UInt8
    /// The first differing pixel in row-major order.
    public var firstDifference: Location?

    public init(differingPixels: Int, maxChannelDelta: UInt8, firstDifference: Location?) {
        self.differingPixels = differingPixels
        self.maxChannelDelta = maxChannelDelta
        self.firstDifference = firstDifference
    }

    /// True when no pixel differs by more than the tolerance.
    public var matches: Bool { differingPixels == 0 }

    public var description: String {
        guard let first = firstDifference else { return "images match (max channel delta \(maxChannelDelta))" }
        return "\(differingPixels) pixels differ, first at (\(first.x), \(first.y)), max channel delta \(maxChannelDelta)"
    }
}

/// Compares two XRGB8888 images of `size` pixel by pixel. A pixel differs when its red, green or blue byte differs
/// by more than `tolerance`; the X byte is padding that scan-out ignores, so it is ignored here too.
/// Buffers shorter than their stride and size describe are a programmer error.
public func compareImages(
    _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer,
    size: Size, strideA: Int, strideB: Int, tolerance: UInt8
) -> ImageDiff {
    precondition(size.width >= 0 && size.height >= 0, "compareImages: invalid size \(size)")
    guard size.width > 0, size.height > 0 else {
        return ImageDiff(differingPixels: 0, maxChannelDelta: 0, firstDifference: nil)
    }
    let rowBytes = size.width * 4
    precondition(strideA >= rowBytes && a.count >= strideA * (size.height - 1) + rowBytes,
                 "compareImages: first image (\(a.count) bytes, stride \(strideA)) is smaller than \(size)")
    precondition(strideB >= rowBytes && b.count >= strideB * (size.height - 1) + rowBytes,
                 "compareImages: second image (\(b.count) bytes, stride \(strideB)) is smaller than \(size)")

    var differing = 0
    var maxDelta: UInt8 = 0
    var first: ImageDiff.Location?
    for y in 0..<size.height {
        let rowA = y * strideA, rowB = y * strideB
        for x in 0..<size.width {
            var pixelDelta: UInt8 = 0
            // Bytes 0, 1, 2 are blue, green, red of the little-endian XRGB word; byte 3 is X.
            for channel in 0..<3 {
                let p = a[rowA + x * 4 + channel], q = b[rowB + x * 4 + channel]
                pixelDelta = max(pixelDelta, p > q ? p - q : q - p)
            }
            maxDelta = max(maxDelta, pixelDelta)
            if pixelDelta > tolerance {
                differing += 1
                if first == nil { first = ImageDiff.Location(x: x, y: y) }
            }
        }
    }
    return ImageDiff(differingPixels: differing, maxChannelDelta: maxDelta, firstDifference: first)
}

/// As the pointer form, for images held in arrays.
public func compareImages(
    _ a: [UInt8], _ b: [UInt8], size: Size, strideA: Int, strideB: Int, tolerance: UInt8
) -> ImageDiff {
    a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in
            compareImages(pa, pb, size: size, strideA: strideA, strideB: strideB, tolerance: tolerance)
        }
    }
}
