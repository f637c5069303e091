import CKioskJpeg
import KioskCore

/// A small JPEG of a screen: XRGB8888 pixels (rows of `stride` bytes) reduced to at most `maxWidth` pixels wide,
/// keeping the aspect ratio, each output pixel the mean of the source pixels it covers (a box filter: text and
/// edges stay legible at a fifth of the size, where dropping pixels would alias), encoded at `quality`. For the
/// fleet's `<prefix>/thumbnail`. Any thread; the pixels are only read.
public func encodeJPEGThumbnail(xrgb8888 bytes: [UInt8], size: Size, stride: Int, maxWidth: Int,
                                quality: Int = 75) throws -> (jpeg: [UInt8], size: Size) {
    guard size.width > 0, size.height > 0, stride >= size.width * 4, maxWidth > 0, (1...100).contains(quality) else {
        throw RenderError("thumbnail: invalid image \(size) with stride \(stride), width \(maxWidth), quality \(quality)")
    }
    let needed = stride * (size.height - 1) + size.width * 4
    guard bytes.count >= needed else {
        throw RenderError("thumbnail: \(bytes.count) bytes given, \(size) with stride \(stride) needs \(needed)")
    }
    let width = min(size.width, maxWidth)
    let height = max(1, Int((Double(size.height) * Double(width) / Double(size.width)).rounded()))
    var rgb = [UInt8](repeating: 0, count: width * height * 3)
    bytes.withUnsafeBufferPointer { source in
        for y in 0..<height {
            let top = y * size.height / height, bottom = max(top + 1, (y + 1) * size.height / height)
            for x in 0..<width {
                let left = x * size.width / width, right = max(left + 1, (x + 1) * size.width / width)
                var r = 0, g = 0, b = 0
                for sy in top..<bottom {
                    var offset = sy * stride + left * 4
                    for _ in left..<right {
                        // Little-endian XRGB8888: B, G, R, X.
                        b += Int(source[offset]); g += Int(source[offset + 1]); r += Int(source[offset + 2])
                        offset += 4
                    }
                }
                let count = (bottom - top) * (right - left), out = (y * width + x) * 3
                rgb[out] = UInt8((r + count / 2) / count)
                rgb[out + 1] = UInt8((g + count / 2) / count)
                rgb[out + 2] = UInt8((b + count / 2) / count)
            }
        }
    }
    var message = [CChar](repeating: 0, count: 256)
    var out: UnsafeMutablePointer<UInt8>?
    var outSize: UInt = 0
    guard kiosk_jpeg_encode_memory(rgb, Int32(width), Int32(height), 3, Int32(quality), &out, &outSize, &message, message.count) == 0,
          let out else {
        let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        throw RenderError("thumbnail: cannot encode JPEG: \(reason)")
    }
    defer { kiosk_jpeg_free_bytes(out) }
    return (Array(UnsafeBufferPointer(start: out, count: Int(outSize))), Size(width: width, height: height))
}
