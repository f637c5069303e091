import CKioskJpeg
import Foundation

/// A JPEG read back by kioskd's own libjpeg reader (`kiosk_jpeg_decode_fd`, through a temporary file): its size and
/// its pixels as 0xFFRRGGBB words. For tests of what kioskd encodes (thumbnails).
public func readJPEG(_ bytes: [UInt8]) throws -> (width: Int, height: Int, pixels: [UInt32]) {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("read-back-\(UUID().uuidString).jpg")
    try Data(bytes).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let fd = open(file.path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw JPEGReadBackError("cannot open \(file.path): errno \(errno)") }
    var width: Int32 = 0, height: Int32 = 0
    var message = [CChar](repeating: 0, count: 256)
    guard let pixels = kiosk_jpeg_decode_fd(fd, 0, 0, 0, &width, &height, &message, message.count) else {
        throw JPEGReadBackError("not a JPEG: " + String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    defer { kiosk_jpeg_free(pixels) }
    return (Int(width), Int(height), Array(UnsafeBufferPointer(start: pixels, count: Int(width * height))))
}

public struct JPEGReadBackError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
