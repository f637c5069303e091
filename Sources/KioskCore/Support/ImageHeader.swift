#if canImport(Glibc)
import Glibc
#endif

/// The pixel size an image file declares in its header, read without decoding: a PNG's IHDR chunk, a JPEG's
/// start-of-frame segment. What `memory.max_image_pixels` is checked against before anything is decoded, by
/// `kioskd check`, by `scene.load` and by the render worker about to decode. SVG declares no pixels (it is drawn
/// at the size it is shown) and answers nil. Synchronous file I/O: off the main loop. Stateless; any thread.
public struct ImageHeader: Sendable, Equatable {
    /// `svg` only for the size an SVG document declares, which the renderer reads (`read` answers nil for SVG).
    public enum Format: String, Sendable { case png, jpeg, svg }

    public var format: Format
    public var width: Int
    public var height: Int

    public var pixels: Int { width * height }

    public init(format: Format, width: Int, height: Int) {
        self.format = format; self.width = width; self.height = height
    }

    /// How far into a JPEG the start-of-frame segment is looked for: past EXIF (at most 64 KiB a segment) and a few
    /// more application segments.
    public static let jpegSearchLimit = 1 << 20

    /// The header of the PNG or JPEG file at `path`; nil for any other file (SVG). Throws a message naming the
    /// problem (without the path: callers name the image) for a path that is not a readable regular file, or a PNG
    /// or JPEG whose header is cut short or broken.
    public static func read(path: String) throws(ImageHeaderError) -> ImageHeader? {
        let file: RegularFile
        do { file = try RegularFile(opening: path) } catch { throw ImageHeaderError(error.problem) }
        return try read(file)
    }

    /// The header of the PNG or JPEG `file` already opened; nil for any other file (SVG).
    public static func read(_ file: RegularFile) throws(ImageHeaderError) -> ImageHeader? {
        try read(Reader { (offset: Int, count: Int) throws(ImageHeaderError) -> [UInt8] in
            do throws(RegularFileError) { return try file.bytes(at: offset, count: count) } catch { throw ImageHeaderError(error.problem) }
        })
    }

    /// The header of a PNG or JPEG held in memory (a raster an SVG embeds); nil for anything else.
    public static func read(bytes: [UInt8]) throws(ImageHeaderError) -> ImageHeader? {
        try read(Reader { (offset: Int, count: Int) throws(ImageHeaderError) -> [UInt8] in
            guard offset < bytes.count else { return [] }
            return Array(bytes[offset..<min(bytes.count, offset + count)])
        })
    }

    private static func read(_ reader: Reader) throws(ImageHeaderError) -> ImageHeader? {
        let signature = try reader.bytes(at: 0, count: 8)
        if signature == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] {
            // The first chunk is IHDR: length (13), type, then width and height, big-endian.
            let ihdr = try reader.bytes(at: 8, count: 16)
            guard ihdr.count == 16, Array(ihdr[4..<8]) == Array("IHDR".utf8) else {
                throw ImageHeaderError("PNG header is cut short or has no IHDR chunk")
            }
            let width = bigEndian(ihdr[8..<12]), height = bigEndian(ihdr[12..<16])
            guard width > 0, height > 0, width <= Int32.max, height <= Int32.max else {
                throw ImageHeaderError("PNG header declares an invalid size \(width)x\(height)")
            }
            return ImageHeader(format: .png, width: width, height: height)
        }
        if signature.starts(with: [0xFF, 0xD8, 0xFF]) { return try jpeg(reader) }
        return nil
    }

    /// Walks the JPEG's segments to the first start-of-frame marker (SOF0...SOF15 but DHT, JPG and DAC).
    private static func jpeg(_ reader: Reader) throws(ImageHeaderError) -> ImageHeader {
        var offset = 2
        while offset < jpegSearchLimit {
            let marker = try reader.bytes(at: offset, count: 4)
            guard marker.count == 4, marker[0] == 0xFF else {
                throw ImageHeaderError("JPEG has no frame header (cut short or broken at byte \(offset))")
            }
            let code = marker[1]
            if code == 0xFF { offset += 1; continue }  // fill byte
            if code == 0x01 || (0xD0...0xD8).contains(code) { offset += 2; continue }  // markers without a length
            let length = Int(marker[2]) << 8 | Int(marker[3])
            if (0xC0...0xCF).contains(code), code != 0xC4, code != 0xC8, code != 0xCC {
                let frame = try reader.bytes(at: offset + 4, count: 5)
                guard frame.count == 5 else { throw ImageHeaderError("JPEG frame header is cut short") }
                let height = Int(frame[1]) << 8 | Int(frame[2]), width = Int(frame[3]) << 8 | Int(frame[4])
                guard width > 0, height > 0 else {
                    throw ImageHeaderError("JPEG frame header declares an invalid size \(width)x\(height)")
                }
                return ImageHeader(format: .jpeg, width: width, height: height)
            }
            guard length >= 2 else { throw ImageHeaderError("JPEG segment at byte \(offset) has an invalid length") }
            offset += 2 + length
        }
        throw ImageHeaderError("JPEG has no frame header in its first \(jpegSearchLimit >> 10) KiB")
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    /// Bytes of the image by offset: up to `count` at `offset`, fewer at its end.
    private struct Reader {
        let read: (_ offset: Int, _ count: Int) throws(ImageHeaderError) -> [UInt8]

        func bytes(at offset: Int, count: Int) throws(ImageHeaderError) -> [UInt8] { try read(offset, count) }
    }
}

/// Why an image header could not be read: a sentence without the file's name. A plain value.
public struct ImageHeaderError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// How many pixels an image file may declare before it is refused unread (`memory.max_image_pixels`). A plain
/// value; any thread.
public enum ImagePixelLimit {
    /// 160 megapixels: a 12000x12000 poster still loads (it decodes in bands, bounded by the size shown), a
    /// 16384x16384 decompression bomb does not.
    public static let defaultMaximum = 160_000_000

    /// nil when `header` is within `maximum`, else the sentence saying why the image is refused.
    public static func problem(_ header: ImageHeader, maximum: Int) -> String? {
        guard header.pixels > maximum else { return nil }
        let size = "\(header.format.rawValue.uppercased()) of \(header.width)x\(header.height) pixels"
        let shown = megapixels(header.pixels).map { "\(size) (\($0))" } ?? size
        let limit = megapixels(maximum).map { "\(maximum), \($0)" } ?? "\(maximum)"
        return "\(shown) is over memory.max_image_pixels (\(limit))"
    }

    /// "144.0 MP" for a million pixels or more; nil below.
    private static func megapixels(_ count: Int) -> String? {
        guard count >= 1_000_000 else { return nil }
        let tenths = (count + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10) MP"
    }
}
